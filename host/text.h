// The small text helpers every report and message uses (host side): one definition each.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tvh {

// printf with one double: fmt("%.2f", 0.5) == "0.50".
std::string fmt(const char* printf_format, double v);
// "1,234,567" (and "-1,234" for negative values).
std::string grouped(int64_t v);
// "[a, b, c]", each item as one line (tvh::one_line: a class name holding a newline or an escape
// is written visibly)
std::string join(const std::vector<std::string>& items);
// "87.50 %" for 0.875.
std::string pct(double fraction);
// "0x0A1B2C3D"
std::string hex32(uint32_t v);
// The "%.9g" text of a float without printf ("nan", "inf", "-inf" for the non-finite).
std::string g9(float v);

}  // namespace tvh
