// A function compiled through the compatibility include (compat_header.c).
#ifndef NATCD_TESTS_C_COMPAT_HEADER_H_
#define NATCD_TESTS_C_COMPAT_HEADER_H_

#include "natcd/client.h"

const char* compat_StatusText(natcdStatus s);

#endif  // NATCD_TESTS_C_COMPAT_HEADER_H_
