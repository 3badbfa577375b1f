#include "plugin/natcd/etcd_api_listener.h"

namespace natcd {
namespace {

constexpr const char* kEmbeddedClientUrl = "http://127.0.0.1:2379";
constexpr const char* kEmbeddedFallbackUrl = "http://127.0.0.1:0";

class EtcdApiFrontEndImpl final : public nats::AdditionalFrontEnd {
 public:
  explicit EtcdApiFrontEndImpl(std::unique_ptr<etcd_api::EtcdGrpcServer> server)
      : server_(std::move(server)) {}
  server::FrontEnd* front_end() override { return server_->front_end(); }
  void StopReceiving(int64_t deadline_ms) override { server_->StopReceiving(deadline_ms); }

 private:
  std::unique_ptr<etcd_api::EtcdGrpcServer> server_;
};

}  // namespace

std::vector<std::string> SplitUrls(const std::string& urls) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= urls.size();) {
    size_t comma = urls.find(',', start);
    if (comma == std::string::npos) comma = urls.size();
    std::string url = urls.substr(start, comma - start);
    if (!url.empty()) out.push_back(url);
    start = comma + 1;
  }
  return out;
}

nats::FrontEndFactory EtcdApiFrontEnd(EtcdApiSettings settings, std::vector<std::string>* urls) {
  return [settings, urls](server::Member* member, uint64_t cluster_id,
                          uint64_t member_id) -> Result<std::unique_ptr<nats::AdditionalFrontEnd>> {
    nats::HeaderInfo header;
    header.cluster_id = cluster_id;
    header.member_id = member_id;
    etcd_api::GrpcServerOptions options = settings.server;
    if (settings.embedded_default && options.listen_urls.empty()) {
      options.listen_urls = {kEmbeddedClientUrl};
    }
    auto started = etcd_api::EtcdGrpcServer::Start(options, member, header, settings.clock);
    if (!started.ok() && settings.embedded_default && settings.server.listen_urls.empty()) {
      options.listen_urls = {kEmbeddedFallbackUrl};
      started = etcd_api::EtcdGrpcServer::Start(options, member, header, settings.clock);
    }
    if (!started.ok()) return started.status();
    *urls = (*started)->urls();
    return std::unique_ptr<nats::AdditionalFrontEnd>(
        new EtcdApiFrontEndImpl(std::move(started).value()));
  };
}

}  // namespace natcd
