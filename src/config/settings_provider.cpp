// `provider:`: the rows of the mapping, their reading and checks, and how a layer's mapping
// applies (it replaces a lower one's whole).
#include <string>
#include <utility>

#include "mlt/util/error.h"
#include "settings_rows.h"
#include "settings_values.h"

namespace mlt::settings_detail {

using namespace rows;

void merge_provider(Value&& value, SshSettings& settings) {
    settings.provider = std::get<ProviderSettings>(std::move(value));
}

FieldDecl provider_row() {
    return special("provider", SettingType::provider, "none",
                   "{name: vast, offer: 'gpu_name=RTX_4090 num_gpus=1', max_price: 0.6, image: "
                   "'pytorch/pytorch', disk_gb: 40, teardown: destroy}",
                   "a marketplace that rents the run's machine when no host is given, and "
                   "releases it when the run is over (docs/providers.md); a model's mapping "
                   "replaces the user's",
                   &merge_provider);
}

const std::vector<FieldDecl>& provider_fields() {
    static const std::vector<FieldDecl> kFields = [] {
        FieldDecl name = choice("name", {"vast", "runpod"}, "none", "vast",
                                "the marketplace: `vast` (vast.ai's `vastai`) or `runpod` "
                                "(`runpodctl`), its CLI installed and logged in",
                                nullptr);
        FieldDecl offer = text("offer", "none", "'gpu_name=RTX_4090 num_gpus=1'",
                               "which machines: vast's search query, or RunPod's GPU type "
                               "('NVIDIA GeForce RTX 4090')",
                               nullptr);
        offer.non_empty = true;
        FieldDecl image = text("image", "none", "'pytorch/pytorch'",
                               "the container image the machine runs", nullptr);
        image.non_empty = true;
        return std::vector<FieldDecl>{
            name,
            offer,
            number("max_price", "none", "0.6",
                   "USD per hour at most, as the instance bills (read back after renting: one "
                   "over it is destroyed at once)",
                   0, 1000, nullptr),
            image,
            integer("disk_gb", "`40`", "40", "the machine's disk, in GB", 1, 100000, nullptr),
            choice("teardown", {"destroy", "stop", "keep"}, "`destroy`", "destroy",
                   "what happens to the machine once the run's results are home: `destroy` "
                   "(nothing bills), `stop` (its disk stays, and bills), `keep`",
                   nullptr),
        };
    }();
    return kFields;
}

ProviderSettings ValueReader::read_provider(const YAML::Node& node, const std::string& key) const {
    ProviderSettings out;
    each_known(node, key, provider_fields(),
               [&](const std::string& name, const FieldDecl& field, const YAML::Node& v) {
                   const Value value = read(field, v, key + "." + name);
                   const auto& text = std::get_if<std::string>(&value);
                   if (text && text->find_first_of("\n\r\t") != std::string::npos)
                       throw config_error(
                           yaml_.where(v) + ": " + key + "." + name + " has a line end or a tab",
                           "write it on one line");
                   // A value the CLI would read as an option of its own (`--url=...`).
                   if (text && !text->empty() && (*text)[0] == '-')
                       throw config_error(
                           yaml_.where(v) + ": " + key + "." + name + " starts with '-'",
                           "the marketplace's CLI would read it as an option");
                   if (name == "name")
                       out.name = std::get<std::string>(value);
                   else if (name == "offer")
                       out.offer = std::get<std::string>(value);
                   else if (name == "max_price")
                       out.max_price = std::get<double>(value);
                   else if (name == "image")
                       out.image = std::get<std::string>(value);
                   else if (name == "disk_gb")
                       out.disk_gb = std::get<int>(value);
                   else
                       out.teardown = std::get<std::string>(value) == "stop"   ? Teardown::stop
                                      : std::get<std::string>(value) == "keep" ? Teardown::keep
                                                                               : Teardown::destroy;
               });
    const auto missing = [&](const char* what) {
        throw config_error(yaml_.where(node) + ": " + key + " has no " + what,
                           "e.g. provider: {name: vast, offer: 'gpu_name=RTX_4090', max_price: "
                           "0.6, image: 'pytorch/pytorch'}");
    };
    if (out.name.empty()) missing("name");
    if (out.offer.empty()) missing("offer");
    if (out.image.empty()) missing("image");
    return out;
}

}  // namespace mlt::settings_detail
