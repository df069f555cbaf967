# Sourced by scripts/test.sh: the cmake arguments and the test scope of the ThreadSanitizer
# build (clang). TSan cannot share a process with ASan, so it is a build dir of its own,
# without the fuzz targets. -O1 and line tables only: TSan's own docs ask for -O1 at least
# (at -O0 every memory access is a call into its runtime), and stack traces need no more. The
# tests run 2-5 times slower there, so their time limits are tripled as in the ASan build.
tsan_cmake_args=(
  -DCMAKE_CXX_COMPILER=clang++
  -DMLT_SANITIZE=thread
  -DMLT_TEST_TIME_FACTOR=3
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG"
)
# The integration tests of the stage (ctest -R), beside the whole unit suite: those that run
# mlt's threads (std::thread in src: the nodes of a gang with their preflight, barrier,
# stop and restart after a lost node; the pulls of --sync-every; the spec's load beside the connect; the parallel streams
# and ranges of a transfer; the tar reader of a download; the sends of notifications) and the
# signals that cut them. The whole integration suite takes about 12 minutes there, past the
# stage's share of CI's 35.
tsan_integration_tests='(^|/)(TrainNodesTest|SyncEveryTest\.(ACheckpoint|LinesKeep|APullCut)'\
'|LivePullTest|TrainSyncTest|TrainSyncFewChannelsTest|TrainRangesTest\.ABigFile'\
'|TrainGpuWatchTest|ForwardTest|ControlShell[A-Za-z]*Test|TrainInterruptTest|TrainLeaveTest'\
'|SpecLoaderTest|TrainNotifyTest|TrainNodesReplaceTest\.(RankZero|ALostJob|Killed))[.A-Z]'
