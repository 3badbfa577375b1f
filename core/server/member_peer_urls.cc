// Member: etcd's MemberUpdate, a member's peer URLs through the log (see
// member_impl.h). etcd proposes a ConfChangeUpdateNode and checks it as it
// applies it; natcd's Raft changes no configuration for it, so the URLs go
// in a MEMBER_ATTRIBUTES entry, checked on every member alike as it is
// applied (against the replicated membership, so all agree).
#include <cinttypes>
#include <cstdio>

#include "server/member_impl.h"

namespace natcd::server {

// On the leader: proposed; answered once applied (ApplyPeerUrls).
void Member::Impl::HandleMemberUpdate(std::unique_ptr<Request> request, Answers*) {
  const MemberUpdateRequest& r = std::get<MemberUpdateRequest>(request->payload);
  LogCommand command;
  MemberAttributes attributes;
  attributes.member_id = r.id;
  attributes.peer_urls = r.peer_urls;
  attributes.sets = MemberAttribute::kPeerUrls;
  command.member_attributes = std::move(attributes);
  ProposeFor(std::move(command), std::move(request));
}

// Not applied again after a restart (the caller skips what the engine has
// applied): the check would then see what later entries changed.
void Member::Impl::ApplyPeerUrls(const LogCommand& command, const raft::Entry& entry,
                                 Answers* answers) {
  const MemberAttributes& a = *command.member_attributes;
  std::unique_ptr<Request> request;
  if (command.origin_member == options.member_id) {
    request = proposals.Take(command.origin_seq, entry.term);
  }
  // Refused or not, the entry is applied: its rows and the applied index
  // commit together.
  Status s = engine->MarkApplied(entry.index);
  if (s.ok()) s = membership.CheckPeerUrls(a.member_id, a.peer_urls, raft->conf_state());
  if (s.ok()) {
    s = raft_storage->SetMemberPeerUrls(a.member_id, a.peer_urls);
    if (s.ok()) {
      membership.SetPeerUrls(a.member_id, a.peer_urls);
    } else {
      fprintf(stderr, "natcd %s: recording member %016" PRIx64 "'s peer URLs: %s\n",
              options.name.c_str(), a.member_id, s.ToString().c_str());
    }
  }
  if (request == nullptr) return;
  if (!s.ok()) {
    Answer_(answers, std::move(request), s, true);
    return;
  }
  // Answered once committed (a write's answer).
  Answer_(answers, std::move(request),
          Response(MembershipResponse{Now(), membership.Members(raft->conf_state())}), true);
}

}  // namespace natcd::server
