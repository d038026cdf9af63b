// coll_p2p.cpp - send, recv and recvAnysource for the coll backend.
//
// libcoll matches messages by order per pair of ranks (no tags, no any-source
// receive). So tags must be 0, and any-source receive goes through the group's
// c10d Store: every send first counts itself under "coll/p2p/<src>/<dst>" (one
// store add), the receiver counts what it took from each rank, and an any-source
// receive polls those counters for a rank that sent more than was taken, then
// receives from it. Sends and receives run on the group's worker thread in issue
// order, like its collectives; a send queued right after a recv (or the reverse) runs
// with it as one coll_sendrecv (see popPair), so exchanges such as irecv + isend on
// both sides do not deadlock. Two blocking sends to each other still would, as in MPI.
#include "coll_pg.hpp"

#include <c10/util/Exception.h>

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

void ProcessGroupColl::sendNow(const at::Tensor& t, int dst)
{
  at::Tensor c = t.contiguous();
  store_->add(p2pKey(rank_, dst), 1);
  check(coll_send(c.data_ptr(), c.nbytes(), COLL_UINT8, dst, comm_), "send");
}

void ProcessGroupColl::recvNow(at::Tensor& t, int src)
{
  at::Tensor c = t.contiguous();
  check(coll_recv(c.data_ptr(), c.nbytes(), COLL_UINT8, src, comm_), "recv");
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
  Item item;
  item.work = c10::make_intrusive<CollWork>(rank_, c10d::OpType::SEND, tensors);
  at::Tensor t = tensors[0];
  item.fn = [this, t, dst](CollWork&) { sendNow(t, dst); };
  item.name = "send";
  item.p2p = P2p::SEND;
  item.tensor = t;
  item.peer = dst;
  return enqueueItem(std::move(item));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::recv(std::vector<at::Tensor>& tensors, int src, int tag)
{
  checkP2p(tensors, src, tag, size_, rank_, "recv");
  TORCH_CHECK(src >= 0, "coll: recv: source ", src, " out of range");
  Item item;
  item.work = c10::make_intrusive<CollWork>(rank_, c10d::OpType::RECV, tensors);
  at::Tensor t = tensors[0];
  item.fn = [this, t, src](CollWork& w) mutable {
    recvNow(t, src);
    w.setSourceRank(src);
  };
  item.name = "recv";
  item.p2p = P2p::RECV;
  item.tensor = t;
  item.peer = src;
  return enqueueItem(std::move(item));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupColl::recvAnysource(std::vector<at::Tensor>& tensors, int tag)
{
  checkP2p(tensors, -1, tag, size_, rank_, "recv");
  at::Tensor t = tensors[0];
  return enqueue(c10d::OpType::RECVANYSOURCE, "recv", tensors, [this, t](CollWork& w) mutable {
    int src = waitAnySource();
    recvNow(t, src);
    w.setSourceRank(src);
  });
}

}  // namespace torch_coll
