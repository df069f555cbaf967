#pragma once
// The members of a JSON object as the provider code reads them: a wrong type is as absent
// (a marketplace's CLI, or a hand-edited record, may write anything).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mlt::provider_json {

// The string member `key` of `o`; "" when missing or not a string.
inline std::string text(const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The number member `key` of `o`; nullopt when missing or not a number.
inline std::optional<double> number(const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    if (it == o.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

}  // namespace mlt::provider_json
