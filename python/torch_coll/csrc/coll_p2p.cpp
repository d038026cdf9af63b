// coll_p2p.cpp - send, recv and recvAnysource for the coll backend.
//
// libcoll matches messages by order per pair of ranks (no tags, no any-source
// receive). So tags must be 0, and any-source receive goes through the group's
// c10d Store: every send first counts itself under "coll/p2p/<src>/<dst>" (one
// store add), the receiver counts what it took from each rank, and an any-source
// receive polls those counters for a rank that sent more than was taken, then
// receives from it. Sends run in issue order on the group's send thread, receives on
// its receive thread, each message src -> dst over a 2-rank communicator of its own
// (made on first use through the store), so a waiting receive holds back neither the
// sends nor the collectives (irecv + isend on both sides works, as with Gloo); sends
// and receives are not ordered against the group's collectives.
#include "coll_pg.hpp"

#include <c10/util/Exception.h>

#include <cstring>
#include <thread>

namespace torch_coll {

namespace {

void checkP2p(const std::vector<at::Tensor>& ts, int peer, int tag, int size, int self, const char* op)
{
  TORCH_CHECK(ts.size() == 1, "coll: ", op, ": takes exactly one tensor, got ", ts.size());
  checkCpuDense(ts[0], op);
  TORCH_CHECK(tag == 0, "coll: ", op, ": tag ", tag, " is not supported (libcoll matches the messages of a pair "
              "of ranks in order; use tag 0)");
  TORCH_CHECK(peer == -1 || (peer >= 0 && peer < size && peer != self), "coll: ", op, ": peer ", peer,
              " out of range 0..", size - 1, " (and not this rank, ", self, ")");
}

}  // namespace

std::string ProcessGroupColl::p2pKey(int src, int dst) const { return c10::str("coll/p2p/", src, "/", dst); }

// The 2-rank communicator of messages src -> dst: the sender makes its unique id and
// puts it in the group's store, the receiver takes it (both block until the other
// side's first send/receive, as the send itself would). Made outside pairMu_: the send
// lane of one rank may wait here for the receive lane of another.
coll_comm_t ProcessGroupColl::pairComm(int src, int dst)
{
  auto key = std::make_pair(src, dst);
  {
    std::lock_guard<std::mutex> lk(pairMu_);
    auto it = pairs_.find(key);
    if (it != pairs_.end())
      return it->second;
  }
  if (timedOut_.load())
    fail("point-to-point after the group timed out");
  std::string k = p2pKey(src, dst) + "/id";
  coll_unique_id_t id;
  if (rank_ == src) {
    check(coll_get_unique_id(&id), "send (communicator set-up)");
    const uint8_t* p = reinterpret_cast<const uint8_t*>(id.internal);
    store_->set(k, std::vector<uint8_t>(p, p + sizeof(id.internal)));
  } else {
    std::vector<uint8_t> v = store_->get(k);
    TORCH_CHECK(v.size() == sizeof(id.internal), "coll: the store's ", k, " has ", v.size(), " bytes");
    std::memcpy(id.internal, v.data(), v.size());
  }
  coll_comm_t c = nullptr;
  check(coll_comm_init_rank(&c, 2, id, rank_ == src ? 0 : 1), rank_ == src ? "send (communicator set-up)"
                                                                           : "recv (communicator set-up)");
  std::lock_guard<std::mutex> lk(pairMu_);
  pairs_[key] = c;
  return c;
}

void ProcessGroupColl::sendNow(const at::Tensor& t, int dst)
{
  at::Tensor c = t.contiguous();
  store_->add(p2pKey(rank_, dst), 1);  // first: an any-source receiver joins pairComm on seeing it
  check(coll_send(c.data_ptr(), c.nbytes(), COLL_UINT8, 1, pairComm(rank_, dst)), "send");
}

void ProcessGroupColl::recvNow(at::Tensor& t, int src)
{
  at::Tensor c = t.contiguous();
  check(coll_recv(c.data_ptr(), c.nbytes(), COLL_UINT8, 0, pairComm(src, rank_)), "recv");
  recvCount_[src]++;
  if (!c.is_same(t))
    t.copy_(c);
}

// The first rank (round robin) that has sent this rank more than it received.
int ProcessGroupColl::waitAnySource()
{
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    for (int k = 0; k < size_; k++) {
      int src = (anyNext_ + k) % size_;
      if (src == rank_)
        continue;
      if (store_->add(p2pKey(src, rank_), 0) > recvCount_[src]) {
        anyNext_ = (src + 1) % size_;
        return src;
      }
    }
    if (timedOut_.load() || (timeout_.count() > 0 && std::chrono::steady_clock::now() > deadline))
      fail(c10::str("recv from any source timed out after ", timeout_.count(), " ms: no rank sent to this one"));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::send(std::vector<at::Tensor>& tensors, int dst, int tag)
{
  checkP2p(tensors, dst, tag, size_, rank_, "send");
  at::Tensor t = tensors[0];
  return enqueue(LANE_SEND, c10d::OpType::SEND, "send", tensors, [this, t, dst](CollWork&) { sendNow(t, dst); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::recv(std::vector<at::Tensor>& tensors, int src, int tag)
{
  checkP2p(tensors, src, tag, size_, rank_, "recv");
  TORCH_CHECK(src >= 0, "coll: recv: source ", src, " out of range");
  at::Tensor t = tensors[0];
  return enqueue(LANE_RECV, c10d::OpType::RECV, "recv", tensors, [this, t, src](CollWork& w) mutable {
    recvNow(t, src);
    w.setSourceRank(src);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::recvAnysource(std::vector<at::Tensor>& tensors, int tag)
{
  checkP2p(tensors, -1, tag, size_, rank_, "recv");
  at::Tensor t = tensors[0];
  return enqueue(LANE_RECV, c10d::OpType::RECVANYSOURCE, "recv", tensors, [this, t](CollWork& w) mutable {
    int src = waitAnySource();
    recvNow(t, src);
    w.setSourceRank(src);
  });
}

}  // namespace torch_coll
