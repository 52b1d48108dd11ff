// Strict reading of the numbers a user types (command-line options, tvsim's arguments): the one place
// that says what a whole number or a decimal number is, and which values an option accepts.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tvh {

// "" when `text` is a whole number from lo to hi written in decimal digits only (no sign, exponent,
// hex prefix or spaces: "-1", "1e3", "0x10" and " 5" are refused, as is a value that does not fit
// 64 bits); else the problem as a sentence without the option's name ("-1 is not a whole number from
// 0 to 100000").
std::string whole_number_problem(const std::string& text, uint64_t lo, uint64_t hi);

// "" when `text` is a finite decimal number (strtod's syntax without "nan", "inf" or hex) from lo to
// hi; else the problem as a sentence without the option's name.
std::string real_number_problem(const std::string& text, double lo, double hi);

// "" when `text` is one of `names`; else "'X' is not one of a, b, c" with "; did you mean b?" when one
// is near.
std::string choice_problem(const std::string& text, const std::vector<std::string>& names);

// The value of a whole number / real number option, or a tvh::UsageError "FLAG: problem" (exit 2).
uint64_t parse_whole_number(const std::string& flag, const std::string& text, uint64_t lo, uint64_t hi);
double parse_real_number(const std::string& flag, const std::string& text, double lo, double hi);

}  // namespace tvh
