#pragma once
// FollowRelease: the release that goes with the job's follows (ReleaseAtEnd). A run whose log
// dir is home already when its job ends (a warm run) gives its lock back in the follow's own
// round trip, and its collection pulls nothing. docs/remote-protocol.md describes it.

#include <optional>
#include <string>
#include <utility>

#include "mlt/train/run/remote_job.h"
#include "mlt/train/run/train_plan.h"
#include "mlt/transfer/transfer.h"

namespace mlt {

class FollowRelease {
  public:
    // Has the job's follows carry the release, when this run may use it (before the start
    // and each follow; after a failover the follows are another host's). Decided once per
    // run: only a collection of nothing but the log dir, with no shutdown_cmds after it, no
    // live pull writing into the local dir meanwhile, not a node of several, and a local log
    // dir that holds something.
    void arm(RemoteJob& job, const TrainPlan& plan, bool in_gang);

    // Runs `command`, which sends a follow that carries the release when the follows do
    // (with `carries` false: none goes): until it returns, that follow's answer is unread,
    // so a lost link leaves it out, and it may still release at the job's end.
    template <class Command>
    auto carry(bool carries, Command&& command) {
        const Unread before = unread_;
        if (carries && armed_ == Armed::yes) unread_ = Unread::out;
        ahead_ = Ahead::none;
        auto result = command();
        unread_ = before;
        return result;
    }
    // The start sent a follow ahead that carries the release (when armed): it is out until
    // the next follow reads it, or a stop goes first (drop_ahead).
    void follow_sent_ahead(bool sent) {
        ahead_ = sent && armed_ == Armed::yes ? Ahead::out : Ahead::none;
    }
    // A command goes before the follow sent ahead: that follow is dropped unread.
    void drop_ahead() {
        if (std::exchange(ahead_, Ahead::none) == Ahead::out) unread_ = Unread::out;
    }
    // What a follow saw at the job's end: it released the lock, or another follow of the run
    // did (a lost one), which needs the lock back before the collection.
    void seen(const FollowStep& step);

    // After a follow that carried the release and was lost: the lock back, marked so that
    // no follow releases it any more (before the next follow, or the collection).
    void retake_if_unread(RemoteJob& job, const std::string& run_id);
    // Whether a follow released the run's lock: nothing is left to pull.
    bool released() const { return released_ == Released::by_follow; }
    // The local log dir's file count when it is still as the release saw it (the collection
    // then moves nothing); nullopt when it changed (by hand): the lock must be taken back,
    // as for any pull, and taken_back() said.
    std::optional<size_t> home_as_released(const TrainPlan& plan) const;
    void taken_back() { released_ = Released::no; }

  private:
    enum class Decision { open, off, on } decision_ = Decision::open;
    std::optional<TreeDigest> digest_;  // the local log dir as it was when first decided
    enum class Armed { no, yes } armed_ = Armed::no;  // the follows carry it
    // A follow that carried it went out, and its answer was lost.
    enum class Unread { none, out } unread_ = Unread::none;
    // The start sent a follow that carries it, unread yet.
    enum class Ahead { none, out } ahead_ = Ahead::none;
    enum class Released { no, by_follow } released_ = Released::no;
};

}  // namespace mlt
