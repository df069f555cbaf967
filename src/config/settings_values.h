#pragma once

// Reading one setting's value from YAML by the type its row declares (settings_table.h):
// scalars, lists, the environment, and the nested sections (connection, nodes, transfer,
// watch and its rules). Private to src/config/.

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "settings_table.h"
#include "settings_yaml.h"

namespace mlt::settings_detail {

// Reads values of one settings file; its messages and warnings go through `yaml`.
class ValueReader {
  public:
    explicit ValueReader(const YamlGuard& yaml) : yaml_(yaml) {}

    // The value of `node` for `field` (named `key` in messages). Throws mlt::Error (config)
    // placed at the node for a wrong type, a value out of range or a broken rule; unknown
    // nested keys are warned about and skipped.
    Value read(const FieldDecl& field, const YAML::Node& node, const std::string& key) const;

  private:
    // Each entry of the mapping `node` (named `key`) that `fields` declares, in order:
    // fn(name, field, value node); an unknown key is warned about (warn_unknown) and skipped.
    template <typename Fn>
    void each_known(const YAML::Node& node, const std::string& key,
                    const std::vector<FieldDecl>& fields, Fn fn) const {
        for (const auto& [k, v] : yaml_.entries(node, key)) {
            const FieldDecl* field = find_field(fields, k.Scalar());
            if (!field) {
                yaml_.warn_unknown(k, key, fields);
                continue;
            }
            fn(k.Scalar(), *field, v);
        }
    }

    std::string read_scalar(const FieldDecl& field, const YAML::Node& node,
                            const std::string& key) const;
    int read_integer(const FieldDecl& field, const YAML::Node& node, const std::string& key) const;
    double read_number(const FieldDecl& field, const YAML::Node& node,
                       const std::string& key) const;
    std::vector<std::string> read_list(const FieldDecl& field, const YAML::Node& node,
                                       const std::string& key) const;
    bool reserved_name(const YAML::Node& node, const std::string& key,
                       const std::string& name) const;
    EnvironmentList read_environment(const FieldDecl& field, const YAML::Node& node,
                                     const std::string& key) const;

    // The nested sections (settings_sections.cpp).
    std::vector<ConnectionSettings> read_connections(const FieldDecl& field, const YAML::Node& node,
                                                     const std::string& key) const;
    ConnectionSettings read_connection(const YAML::Node& node, const std::string& key) const;
    NodesValue read_nodes(const YAML::Node& node, const std::string& key,
                          const std::vector<FieldDecl>& fields) const;
    WatchValue read_watch(const YAML::Node& node, const std::string& key) const;
    std::vector<StopRule> read_rules(const FieldDecl& field, const YAML::Node& node,
                                     const std::string& key) const;
    // A plateau rule; `metric` is set to the node of its regex.
    StopRule read_plateau(const YAML::Node& node, const std::string& key,
                          std::optional<YAML::Node>& metric) const;

    // `watch.on_failure`: each rule's regex checked here, before anything remote.
    std::vector<FailureRule> read_failure_rules(const FieldDecl& field, const YAML::Node& node,
                                                const std::string& key) const;

    // `checkpoints` (settings_checkpoints.cpp): every value checked here, before anything remote.
    CheckpointSettings read_checkpoints(const YAML::Node& node, const std::string& key) const;
    ProviderSettings read_provider(const YAML::Node& node, const std::string& key) const;
    void read_keep_best(const YAML::Node& node, const std::string& key,
                        CheckpointSettings& out) const;

    // `notify` (settings_notify.cpp).
    std::vector<NotifyTarget> read_notify(const FieldDecl& field, const YAML::Node& node,
                                          const std::string& key) const;
    NotifyTarget read_notify_target(const YAML::Node& node, const std::string& key) const;

    const YamlGuard& yaml_;
};

}  // namespace mlt::settings_detail
