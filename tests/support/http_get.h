// A minimal blocking HTTP/1.1 client for tests of natcd's metrics listener:
// one request per connection (Connection: close), loopback addresses only,
// bounded in time.
//
//   HttpResponse r = HttpRequest("http://127.0.0.1:2381/metrics");
//   EXPECT_EQ(r.status, 200) << r.error;
#pragma once

#include <chrono>
#include <map>
#include <string>

namespace natcd::testing {

struct HttpResponse {
  int status = 0;                              // 0: no response (see error)
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::string error;
};

// url: http://127.x.x.x:port/path[?query]. Anything else is refused.
HttpResponse HttpRequest(const std::string& url, const std::string& method = "GET",
                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace natcd::testing
