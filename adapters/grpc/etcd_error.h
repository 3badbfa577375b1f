// natcd's Status as etcd's gRPC error: the code and the exact message of
// etcd's rpctypes (api/v3rpc/rpctypes/error.go). Clients match these
// messages: clientv3 turns the exact text back into its typed error
// (rpctypes.ErrCompacted, ...), the npm etcd3 client picks its error class
// by substring. So where natcd's own message adds detail ("required revision
// 3 has been compacted; compact revision is 5"), the gRPC message is etcd's
// exact text; errors etcd has no name for keep natcd's message.
//
// Thread safety: pure functions.
#pragma once

#include <grpcpp/support/status.h>

#include "natcd/status.h"

namespace natcd::etcd_api {

grpc::Status ToGrpcStatus(const Status& status);

}  // namespace natcd::etcd_api
