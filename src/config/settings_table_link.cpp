// The rows of the `ssh:` keys of the link, syncing, failover, the multi-node and cost
// settings, the watch, and the workspace transfer.
#include "settings_rows.h"

namespace mlt::settings_detail {

using namespace rows;

namespace {

// For a key load_settings reads from the layers themselves (spec_loader): nothing to apply.
void read_by_load_settings(Value&& /*value*/, SshSettings& /*settings*/) {}

}  // namespace

// The link, syncing, the multi-node and cost settings, and the workspace transfer.
std::vector<FieldDecl> link_and_transfer_fields() {
    using S = SshSettings;
    return {
        integer("sync_every", "`0`", "0",
                "seconds between pulls of the remote log dir (logs and checkpoints) while "
                "training, on a second connection (as `--sync-every`; with several nodes, rank "
                "0's); 0: only at the end",
                0, 604800, &assign<&S::sync_every>),
        special("host_key_checking", SettingType::host_key_checking, "`accept-new`", "accept-new",
                "unknown host keys: `yes` refuses, `accept-new` records, `no` accepts without "
                "recording; a changed key: `no` accepts it with a warning (then only key "
                "authentication, known_hosts untouched), the others refuse it",
                &assign<&S::host_key_checking>),
        integer("reconnect_timeout", "`600`", "600",
                "seconds to keep reconnecting after the link dropped or went silent (the run "
                "then continues where it was); 0: give up at once",
                0, 604800, &assign<&S::reconnect_timeout>),
        integer("max_restarts", "`0`", "0",
                "times a `train` restarts its job by itself when it finds it lost (its "
                "processes gone without an exit status: a host restart, a killed wrapper), in "
                "place, as the run's next attempt; with several nodes, times every node "
                "restarts together after one node's job was lost; 0: a lost job ends the run",
                0, 1000, &assign<&S::max_restarts>),
        list("fallback_hosts", "[\"root@gpu2:22/work\", \"gpu3 price_per_hour=0.4\"]",
             "hosts to continue on when the host is lost (not back within `reconnect_timeout`), "
             "in order: each a host spec as `-h` takes it, optionally followed by "
             "`price_per_hour=USD` and (for a node of several taking rank 0) `master_addr=ADDR`; "
             "the checkpoints that came home are pushed there and the job starts as the run's "
             "next attempt (see docs/spot.md; with several nodes, the host takes the lost "
             "node's rank and every node starts again: docs/multi-node.md). A higher layer's "
             "list replaces a lower one's",
             &assign<&S::fallback_hosts>),
        text("provision_cmd", "none", "\"./rent_gpu.sh\"",
             "local command (run with `sh -c`, at most 15 min) that provides a host when the "
             "`fallback_hosts` are used up: its last output line is a host spec as in "
             "`fallback_hosts`; at most 3 times per run",
             &assign<&S::provision_cmd>),
        special("nodes", SettingType::nodes, "see below",
                "{hosts: [], master_addr: \"\", master_port: 0}",
                "the nodes of a multi-node run and their rendezvous (docs/multi-node.md)",
                &merge_nodes),
        special("transfer", SettingType::transfer, "see below",
                "{connections: auto, min_rate: 65536, stall_seconds: 30}",
                "how big files move (docs/architecture.md, \"Big files\"), and the progress "
                "every transfer must make",
                &merge_transfer),
        special("checkpoints", SettingType::checkpoints, "none (nothing deleted)",
                "{pattern: 'checkpoints/*.pt', keep_last: 2, keep_best: {metric: "
                "'val_loss[=:] *([0-9.eE+-]+)', mode: min, n: 1}}",
                "which files of the log dir are checkpoints, which of them stay on the host "
                "and here (the rest are deleted on both ends), and when one is whole enough to "
                "come home (docs/usage.md, \"Checkpoints\"); a model's mapping replaces the "
                "user's",
                &merge_checkpoints),
        provider_row(),
        special("watch", SettingType::watch, "see below",
                "{every: 15, idle_gpu_minutes: 0, stop_idle: false, silent_minutes: 0, "
                "stop_silent: false, stop_when: [], on_failure: [], on_failure_defaults: true}",
                "what mlt watches while the job runs (docs/usage.md, \"Watching a run\")",
                &merge_watch),
        number("price_per_hour", "`0.0`", "1.25",
               "USD per hour of the host (as `--price`): the cost shown while waiting, in the "
               "run's summary and in the history, and what `--max-cost` counts; 0: not known",
               0, 1000000, &assign<&S::price_per_hour>),
        text("workspace", "none", "~/src/my_project",
             "local directory uploaded incrementally before training (as `--workspace`)",
             &assign<&S::workspace>),
        choice("compression", {"none", "gzip", "zstd"}, "`zstd`", "none",
               "compression of the tar streams (workspace, upload_files, log dir), level 1; "
               "uploaded files that shrink by less than 10 % (sampled) go uncompressed; "
               "without `zstd` on the remote, none (see docs/usage.md)",
               &assign<&S::compression>),
        choice("spec_loader", {"auto", "mltk", "literals"}, "`auto`", "literals",
               "how the model spec's `ssh_*` values are read: `auto` loads it through MLTK when "
               "`python3` can import `mltk`, else reads its literals; `mltk` requires MLTK; "
               "`literals` never runs Python (see below)",
               &read_by_load_settings),
    };
}

}  // namespace mlt::settings_detail
