#pragma once
// `mlt ssh ... logs|stop|download`: one command on the job of a model.

#include <string>

#include "mlt/commands/targets.h"

namespace mlt {

// `logs MODEL [--test] [-f]`: prints the remote console log (following it with -f). `test`:
// the test model MODEL-test, as `train MODEL --test`.
// With several -h: every node's log in turn, each line prefixed "[rank N] ", or only node
// `rank`'s (-1: all); -f follows one node only. The log is filtered as train's follow is
// (ConsoleFilter), unless `raw_console`.
int run_logs(const SshCommandLine& cli, const std::string& model, bool test, bool follow,
             int rank = -1, bool raw_console = false);

// `stop MODEL [--test]`: stops the remote job's process group and releases its lock.
int run_stop(const SshCommandLine& cli, const std::string& model, bool test);

// `download MODEL [--test]`: pulls archive, logs and download_files now; the job is left alone.
int run_download(const SshCommandLine& cli, const std::string& model, bool test);

}  // namespace mlt
