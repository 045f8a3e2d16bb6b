// A small ordered JSON value: cldmabuf-info collects everything it finds into
// one of these, prints it as JSON with --json, and the human renderer reads
// the same tree, so both outputs always say the same thing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cldmabuf::info {

class Json {
public:
    enum class Kind { null, boolean, number, string, array, object };

    Json() = default;
    Json(bool b) : kind_(Kind::boolean), b_(b) {}
    Json(int v) : kind_(Kind::number), n_(v) {}
    Json(int64_t v) : kind_(Kind::number), n_(v) {}
    Json(uint64_t v) : kind_(Kind::number), n_(static_cast<int64_t>(v)) {}
    Json(const char *s) : kind_(Kind::string), s_(s ? s : "") {}
    Json(std::string s) : kind_(Kind::string), s_(std::move(s)) {}

    static Json array() { Json j; j.kind_ = Kind::array; return j; }
    static Json object() { Json j; j.kind_ = Kind::object; return j; }

    Kind kind() const { return kind_; }
    bool is_null() const { return kind_ == Kind::null; }
    bool as_bool() const { return kind_ == Kind::boolean && b_; }
    int64_t as_int() const { return kind_ == Kind::number ? n_ : 0; }
    const std::string &as_string() const { return s_; }

    // Arrays.
    Json &push(Json v) { items_.push_back(std::move(v)); return items_.back(); }
    const std::vector<Json> &items() const { return items_; }
    // Objects: insertion order is kept (the output reads top to bottom).
    Json &set(const std::string &key, Json v);
    const Json &operator[](const std::string &key) const;  // a null value when absent
    bool has(const std::string &key) const;
    const std::vector<std::pair<std::string, Json>> &fields() const { return fields_; }

    std::string dump(int indent = 2) const;

private:
    void dump_to(std::string &out, int indent, int depth) const;
    Kind kind_ = Kind::null;
    bool b_ = false;
    int64_t n_ = 0;
    std::string s_;
    std::vector<Json> items_;
    std::vector<std::pair<std::string, Json>> fields_;
};

std::string json_escape(const std::string &s);

}  // namespace cldmabuf::info
