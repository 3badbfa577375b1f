#include "plugin/natcdctl/targets.h"

namespace natcdctl {

int Targets(const Context& ctx, const Conn& c, std::vector<Target>* out) {
  if (!ctx.opts.cluster) {
    out->push_back({0, ctx.Endpoint(c)});
    return 0;
  }
  natcdMemberResponse* r = nullptr;
  natcdStatus s = natcdMember_List(&r, c.client);
  if (s != natcdStatus_OK) return LibFail(s);
  for (size_t i = 0; i < r->n_members; ++i) {
    const natcdMember& m = r->members[i];
    out->push_back({m.id, m.name[0] ? m.name : HexId(m.id)});
  }
  natcdMemberResponse_Destroy(r);
  return 0;
}

}  // namespace natcdctl
