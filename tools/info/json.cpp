#include "tools/info/json.hpp"

#include <cstdio>

namespace cldmabuf::info {

Json &Json::set(const std::string &key, Json v) {
    for (auto &[k, value] : fields_)
        if (k == key) return value = std::move(v);
    fields_.emplace_back(key, std::move(v));
    return fields_.back().second;
}

const Json &Json::operator[](const std::string &key) const {
    static const Json none;
    for (const auto &[k, value] : fields_)
        if (k == key) return value;
    return none;
}

bool Json::has(const std::string &key) const {
    for (const auto &field : fields_)
        if (field.first == key) return true;
    return false;
}

std::string json_escape(const std::string &s) {
    std::string out;
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out;
}

std::string Json::dump(int indent) const {
    std::string out;
    dump_to(out, indent, 0);
    out += '\n';
    return out;
}

void Json::dump_to(std::string &out, int indent, int depth) const {
    const std::string pad(static_cast<size_t>(indent * (depth + 1)), ' ');
    const std::string close_pad(static_cast<size_t>(indent * depth), ' ');
    switch (kind_) {
    case Kind::null: out += "null"; break;
    case Kind::boolean: out += b_ ? "true" : "false"; break;
    case Kind::number: out += std::to_string(n_); break;
    case Kind::string: out += '"' + json_escape(s_) + '"'; break;
    case Kind::array:
        if (items_.empty()) { out += "[]"; break; }
        out += "[\n";
        for (size_t i = 0; i < items_.size(); ++i) {
            out += pad;
            items_[i].dump_to(out, indent, depth + 1);
            out += i + 1 < items_.size() ? ",\n" : "\n";
        }
        out += close_pad + "]";
        break;
    case Kind::object:
        if (fields_.empty()) { out += "{}"; break; }
        out += "{\n";
        for (size_t i = 0; i < fields_.size(); ++i) {
            out += pad + '"' + json_escape(fields_[i].first) + "\": ";
            fields_[i].second.dump_to(out, indent, depth + 1);
            out += i + 1 < fields_.size() ? ",\n" : "\n";
        }
        out += close_pad + "}";
        break;
    }
}

}  // namespace cldmabuf::info
