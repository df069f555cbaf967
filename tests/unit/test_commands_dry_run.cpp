// render_dry_run: the sections, the sizes, and that no secret shows.
#include <gtest/gtest.h>

#include <string>

#include "mlt/commands/dry_run.h"
#include "mlt/util/paths.h"
#include "transfer_fixtures.h"

namespace {

using mlt::DryRun;
using mlt::DryRunNode;

// One node with every section filled, its files in `dir`.
DryRunNode full_node(const mlt::test::TempDir& dir) {
    mlt::write_file_atomic(dir / "m.py", std::string(2048, 'x'), 0644);
    mlt::write_file_atomic(dir / "data.csv", "1,2\n", 0644);
    DryRunNode n;
    n.target.connect.host = "gpu";
    n.target.connect.host_origin = "from -h";
    n.destination.display = "root@10.0.0.7:2222";
    n.destination.identity = "/home/u/.ssh/id_gpu";
    n.destination.known_hosts = "/home/u/.ssh/known_hosts";
    n.workspace = dir.path();
    n.left_out = {{".env", "looks like a secret: never synced"},
                  {"build/", "ignored by .gitignore: build/"}};
    mlt::TrainPlan& p = n.plan;
    p.model = "m";
    p.remote_dir = "/work";
    p.remote_log_dir = "/work/logs/m";
    p.archive = "m.mltk.zip";
    p.local_archive = "/home/u/models/m.mltk.zip";
    p.local_logs = "/home/u/.mltk/models/m";
    p.uploads["/work"] = {{dir / "m.py", "m.py"}, {dir / "data.csv", "data/data.csv"}};
    p.uploads["/common"] = {{dir / "missing.py", "lib.py"}};
    p.wrapper.startup_cmds = {"pip install -r requirements.txt"};
    p.wrapper.train_cmd = "python3 'm.py'";
    p.wrapper.train_args = {"--epochs", "3 4"};
    p.shutdown_cmds = {"echo bye"};
    p.environment = {{"WANDB_API_KEY", "s3cr3t-token-value"}, {"EMPTY", ""}};
    p.price_per_hour = 0.5;
    p.budget = {2, 10};
    p.stop_when = {{"loss=nan", false, false, 5}, {"val_acc=([0-9.]+)", true, true, 3}};
    p.sync_every_s = 300;
    p.max_restarts = 2;
    p.notify = {{"https://hooks.slack.com/services/T0/B0/XyzSecret?x=1", mlt::NotifyFormat::slack}};
    p.notify_cmd = "curl -H 'Authorization: Bearer tok3n' https://x";
    p.resume_line = "mlt ssh -h gpu train m --resume";
    p.stop_line = "mlt ssh -h gpu stop m";
    return n;
}

TEST(DryRun, ShowsEverySectionInOrder) {
    mlt::test::TempDir dir;
    DryRun run;
    run.nodes.push_back(full_node(dir));
    const std::string text = mlt::render_dry_run(run);
    size_t at = 0;
    for (const char* heading :
         {"Plan of train m (", "\nHost\n", "\nRemote dir\n", "\nUploads: ", "\nLeft out\n",
          "\nStartup commands\n", "\nTrain command\n", "\nShutdown commands\n", "\nEnvironment\n",
          "\nLimits\n", "\nRules\n", "\nSync\n", "\nFailover\n", "\nNotifications\n", "\nRun\n"}) {
        const size_t found = text.find(heading, at);
        ASSERT_NE(found, std::string::npos) << heading << " after " << at << " in\n" << text;
        at = found;
    }
}

TEST(DryRun, ListsFilesWithSizesAndWhatIsLeftOut) {
    mlt::test::TempDir dir;
    DryRun run;
    run.nodes.push_back(full_node(dir));
    const std::string text = mlt::render_dry_run(run);
    // The total counts the files that could be read; one that cannot shows "?".
    EXPECT_NE(text.find("Uploads: 3 file(s), 2.0 KiB"), std::string::npos) << text;
    EXPECT_NE(text.find("  m.py            2.0 KiB\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  data/data.csv   4 B\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  /common/lib.py  ?\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  .env: looks like a secret: never synced\n"), std::string::npos);
    EXPECT_NE(text.find("  build/: ignored by .gitignore: build/\n"), std::string::npos);
    EXPECT_NE(text.find("  python3 'm.py' --epochs '3 4'\n"), std::string::npos) << text;
}

TEST(DryRun, HidesEnvironmentValuesNotifyUrlsAndCommandArguments) {
    mlt::test::TempDir dir;
    DryRun run;
    run.nodes.push_back(full_node(dir));
    run.provision_cmd = "vastai create --api-key k3y";
    const std::string text = mlt::render_dry_run(run);
    EXPECT_NE(text.find("  WANDB_API_KEY=(hidden)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  EMPTY=(empty)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  https://hooks.slack.com/… (slack)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  notify_cmd: curl ... (arguments not shown)\n"), std::string::npos);
    EXPECT_NE(text.find("  provision_cmd: vastai ... (arguments not shown)\n"), std::string::npos);
    for (const char* secret : {"s3cr3t", "XyzSecret", "services/T0", "tok3n", "k3y"})
        EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in\n" << text;
}

TEST(DryRun, ShowsLimitsRulesSyncAndFailover) {
    mlt::test::TempDir dir;
    DryRun run;
    run.nodes.push_back(full_node(dir));
    run.nodes.back().plan.checkpoints.pattern = "ck/*.pt";
    run.nodes.back().plan.checkpoints.keep_last = 2;
    run.nodes.back().plan.checkpoints.best_metric = "loss=([0-9.]+)";
    run.nodes.back().plan.checkpoints.best_n = 1;
    run.nodes.back().plan.on_failure = {{"NCCL timeout", mlt::FailureAction::restart, false},
                                        {"Xid", mlt::FailureAction::exclude_host, true}};
    run.fallback_hosts.push_back(mlt::parse_standby_host("root@1.2.3.4:4022/w price_per_hour=0.35",
                                                         "fallback_hosts entry 1"));
    const std::string text = mlt::render_dry_run(run);
    for (const char* line :
         {"  price: $0.50 per hour\n", "  max hours: 2 (then stop, collect, exit 5)\n",
          "  max cost: $10.00 (then stop, collect, exit 5)\n",
          "  stop_when: a console line matching /loss=nan/ stops the job\n",
          "  stop_when: plateau of /val_acc=([0-9.]+)/ (max, patience 3) stops the job\n",
          "  log dir pulled: every 300 s while training, and at the end\n",
          "  checkpoints: ck/*.pt: the newest 2 and the best 1 (min) stay on both ends, whole "
          "after 10 s\n",
          "  job lost: restart it in place up to 2 time(s) (max_restarts)\n",
          "  fallback host: root@1.2.3.4:4022/w ($0.35 per hour)\n",
          "  on failure: 'NCCL timeout' -> restart\n",
          "  on failure: 'Xid' -> exclude_host (default)\n"})
        EXPECT_NE(text.find(line), std::string::npos) << line << "in\n" << text;
}

TEST(DryRun, SeveralNodesHaveAHostSectionEach) {
    mlt::test::TempDir dir;
    DryRun run;
    run.nodes.push_back(full_node(dir));
    run.nodes.push_back(full_node(dir));
    run.nodes.back().destination.display = "root@10.0.0.8:22";
    const std::string text = mlt::render_dry_run(run);
    EXPECT_NE(text.find("\nHost (rank 0)\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\nHost (rank 1)\n  gpu (from -h) -> root@10.0.0.8:22\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  2 nodes; MASTER_ADDR rank 0's address, MASTER_PORT a free port"),
              std::string::npos)
        << text;
}

}  // namespace
