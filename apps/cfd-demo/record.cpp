#include "record.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace lp::cfd {

namespace {

std::string json_quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void check_name(const std::string& name) {
  if (name.empty() || name.find_first_of("=\n,\"") != std::string::npos) {
    throw std::invalid_argument("bad record field name '" + name + "'");
  }
}

}  // namespace

Record& Record::add(const std::string& name, double value) {
  check_name(name);
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  fields_.push_back({name, text, Kind::kNumber});
  return *this;
}

Record& Record::add(const std::string& name, long long value) {
  check_name(name);
  fields_.push_back({name, std::to_string(value), Kind::kNumber});
  return *this;
}

Record& Record::add(const std::string& name, bool value) {
  check_name(name);
  fields_.push_back({name, value ? "true" : "false", Kind::kFlag});
  return *this;
}

Record& Record::add(const std::string& name, const std::string& value) {
  check_name(name);
  if (value.find('\n') != std::string::npos) throw std::invalid_argument("record field " + name + " holds a newline");
  fields_.push_back({name, value, Kind::kText});
  return *this;
}

Record& Record::append(const Record& other, const std::string& prefix) {
  for (const auto& field : other.fields_) {
    check_name(prefix + field.name);
    fields_.push_back({prefix + field.name, field.value, field.kind});
  }
  return *this;
}

const Record::Field& Record::find(const std::string& name) const {
  for (const auto& field : fields_) {
    if (field.name == name) return field;
  }
  throw std::invalid_argument("record has no field '" + name + "'");
}

double Record::number(const std::string& name) const {
  const std::string& value = find(name).value;
  size_t used = 0;
  double number = 0;
  try {
    number = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size()) throw std::invalid_argument("record field " + name + " is not a number: " + value);
  return number;
}

bool Record::flag(const std::string& name) const {
  const std::string& value = find(name).value;
  if (value != "true" && value != "false") throw std::invalid_argument("record field " + name + " is not true/false");
  return value == "true";
}

const std::string& Record::text(const std::string& name) const { return find(name).value; }

std::string Record::to_lines() const {
  std::string out;
  for (const auto& field : fields_) out += field.name + "=" + field.value + "\n";
  return out;
}

Record Record::from_lines(const std::string& lines) {
  Record record;
  size_t start = 0;
  while (start < lines.size()) {
    size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    const std::string line = lines.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    const size_t equals = line.find('=');
    if (equals == std::string::npos || equals == 0) throw std::invalid_argument("bad record line '" + line + "'");
    record.fields_.push_back({line.substr(0, equals), line.substr(equals + 1), Kind::kText});
  }
  return record;
}

std::string Record::to_json() const {
  std::string out = "{";
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& field = fields_[i];
    out += (i ? ", " : "") + json_quoted(field.name) + ": ";
    if (field.kind == Kind::kText) {
      out += json_quoted(field.value);
    } else if (field.kind == Kind::kNumber && !std::isfinite(std::strtod(field.value.c_str(), nullptr))) {
      out += "null";  // JSON has no NaN or infinity
    } else {
      out += field.value;
    }
  }
  return out + "}";
}

std::string Record::csv_header() const {
  std::string out;
  for (size_t i = 0; i < fields_.size(); ++i) out += (i ? "," : "") + fields_[i].name;
  return out;
}

std::string Record::csv_row() const {
  std::string out;
  for (size_t i = 0; i < fields_.size(); ++i) {
    const Field& field = fields_[i];
    const bool quote = field.value.find_first_of(",\"") != std::string::npos;
    std::string value = field.value;
    if (quote) {
      std::string escaped = "\"";
      for (char c : value) escaped += c == '"' ? std::string("\"\"") : std::string(1, c);
      value = escaped + "\"";
    }
    out += (i ? "," : "") + value;
  }
  return out;
}

}  // namespace lp::cfd
