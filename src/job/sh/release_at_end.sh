# What the follow of a run's job does at the end, after its result (result.sh: mlt_sha, mlt_logd)
# when it carries a release (ReleaseAtEnd): releases the lock when nothing is left to collect: the
# job recorded an exit status, no archive and no log dir but mlt_release_dir, whose listing
# (mlt_release_digest, remote_tree_digest: a command, run by eval) hashes to mlt_release_sha. After
# the result, so that a follow whose reader is gone (its channel closed) dies on that write first
# and releases nothing. Never once retake_run has left `retaken` (a follow of an earlier connection
# may still be waiting for the job's end): the lock is moved aside first and `retaken` looked for
# after that, so a retake that came meanwhile gets it back. The lock released lies as `released`,
# which names the run: only a retake of that run puts it back.
if [ -e "$s" ] && [ -z "$mlt_sha" ] && { [ -z "$mlt_logd" ] || [ "$mlt_logd" = "$mlt_release_dir" ]; } && [ ! -e "$j/retaken" ] && mlt_mine && [ "$(eval "$mlt_release_digest")" = "$mlt_release_sha" ] && mv "$j/lock" "$j/lock.release.$$" 2>/dev/null; then
  if grep -qxF "run=$r" "$j/lock.release.$$" && [ ! -e "$j/retaken" ] && mv -f "$j/lock.release.$$" "$j/released" 2>/dev/null; then echo released=1
  else ln "$j/lock.release.$$" "$j/lock" 2>/dev/null; rm -f "$j/lock.release.$$"; fi
fi
