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
// `s` with the ASCII letters A-Z in lower case (file extensions and folder names compared by letter).
std::string ascii_lower(std::string s);
// "87.50 %" for 0.875.
std::string pct(double fraction);
// "0x0A1B2C3D"
std::string hex32(uint32_t v);
// The "%.9g" text of a float without printf ("nan", "inf", "-inf" for the non-finite).
std::string g9(float v);

// `word` as one shell word: as is when it holds only characters no shell treats specially, else in
// single quotes ("'my photos'"), so that a printed command can be pasted.
std::string shell_word(const std::string& word);

// "NAME.q8.tvb" for "NAME.tvb" (else NAME + ".q8.tvb"): where the int8 model of a float model goes.
std::string int8_name_for(const std::string& tvb);

}  // namespace tvh
