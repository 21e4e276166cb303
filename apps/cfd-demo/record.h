// Record: an ordered list of named values (numbers, flags, text) that prints as "key=value" lines
// (the wire form the consumer sends back to the producer), JSON, or a CSV header and row.
#pragma once

#include <string>
#include <vector>

namespace lp::cfd {

class Record {
 public:
  Record& add(const std::string& name, double value);
  Record& add(const std::string& name, long long value);
  Record& add(const std::string& name, bool value);
  Record& add(const std::string& name, const std::string& value);
  // Adds the other record's fields, each name prefixed with `prefix`.
  Record& append(const Record& other, const std::string& prefix = "");

  // Throw std::invalid_argument naming the field if it is absent or not of that kind.
  double number(const std::string& name) const;
  bool flag(const std::string& name) const;
  const std::string& text(const std::string& name) const;

  std::string to_lines() const;
  // Parses to_lines() output; values keep their text and are converted by the getters.
  static Record from_lines(const std::string& lines);
  std::string to_json() const;
  std::string csv_header() const;
  std::string csv_row() const;

 private:
  enum class Kind { kNumber, kFlag, kText };
  struct Field {
    std::string name;
    std::string value;
    Kind kind;
  };
  const Field& find(const std::string& name) const;

  std::vector<Field> fields_;
};

}  // namespace lp::cfd
