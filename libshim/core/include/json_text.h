// JSON text for the engine's statistics and the tools beside it (longpiped's STATUS,
// longpipe-config --json): one string quoter, so every JSON LongPipe writes escapes alike.
#pragma once

#include <string>
#include <string_view>

namespace lp {

// `text` as a JSON string literal: quotes and backslashes escaped, control characters as \u00XX
// (RFC 8259), every other byte as it is (UTF-8 passes through).
std::string json_string(std::string_view text);

}  // namespace lp
