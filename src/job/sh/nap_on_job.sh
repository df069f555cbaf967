# mlt_nap SECONDS, the wait of a job's follow between two looks (before follow.sh): on the wrapper's
# lock of `running`, mlt_lockf (flock -s -w), which ends the wait as the job ends: status 1 is the
# time up (the job runs); 0 with no status file, or an error, means the wrapper holds no lock (no
# flock there, an older wrapper, a job dir it cannot write), and the follow sleeps from then on. The
# first call finds out whether flock can wait: BusyBox's flock has no -w (its usage error would read
# as the time up), util-linux's answers `-w 0` on /dev/null with 0. A library of functions: it runs
# nothing itself.
mlt_fl=unknown
mlt_nap() {
  if [ "$mlt_fl" = unknown ]; then mlt_fl=; [ -z "$g" ] || ! command -v flock >/dev/null 2>&1 || ! flock -s -w 0 /dev/null true 2>/dev/null || mlt_fl=1; fi
  if [ -z "$mlt_fl" ]; then sleep "$1"; return; fi
  flock -s -w "$1" "$mlt_lockf" true 2>/dev/null
  case $? in 0) [ -e "$s" ] || mlt_fl= ;; 1) ;; *) mlt_fl=; sleep "$1" ;; esac
}
