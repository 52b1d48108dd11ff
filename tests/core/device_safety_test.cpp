// The core stays device-safe: scan common/ for what must never be there (host headers, exceptions,
// heap allocation). The tvcore_device target (-fno-exceptions -fno-rtti -Werror) checks the rest.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "test_support.h"

namespace fs = std::filesystem;

namespace {
// Removes // and /* */ comments and string literals, so only code is scanned.
std::string strip(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (s.compare(i, 2, "//") == 0) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (s.compare(i, 2, "/*") == 0) {
      size_t e = s.find("*/", i + 2);
      i = e == std::string::npos ? s.size() : e + 2;
    } else if (s[i] == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
      ++i;
      out += "\"\"";
    } else {
      out += s[i++];
    }
  }
  return out;
}

// Calls fn(path, code without comments or strings) for every .h and .cpp of common/src; returns how many.
template <typename F>
int for_each_core_source(F fn) {
  int files = 0;
  for (auto& e : fs::recursive_directory_iterator(tvtest::source_path("common/src"))) {
    const std::string ext = e.path().extension().string();
    if (ext != ".h" && ext != ".cpp") continue;
    ++files;
    std::ifstream f(e.path());
    std::stringstream ss;
    ss << f.rdbuf();
    fn(e.path(), strip(ss.str()));
  }
  return files;
}
}  // namespace

TEST(DeviceSafety, CoreUsesNoHostOnlyFacility) {
  const std::regex forbidden(
      R"(#\s*include\s*<(iostream|fstream|sstream|cstdio|stdio\.h|string|vector|map|memory|thread|mutex|filesystem|stdexcept|exception|typeinfo|functional|chrono|regex)>|\bthrow\b|\btry\s*\{|\bcatch\s*\(|\bmalloc\s*\(|\bcalloc\s*\(|\brealloc\s*\(|\bfree\s*\(|\bnew\s+[A-Za-z_]|\bdelete\s|dynamic_cast|typeid|\bprintf\s*\(|\bfopen\s*\()");
  const int files = for_each_core_source([&](const fs::path& path, const std::string& code) {
    std::smatch m;
    EXPECT_FALSE(std::regex_search(code, m, forbidden)) << path << " uses \"" << m.str() << "\"";
  });
  EXPECT_GT(files, 20);
}

TEST(DeviceSafety, CoreHoldsNoDoubleAndOwnsItsTranscendentals) {
  // The S3's FPU is single precision: a double is a software call. And the C library's exp, log, pow,
  // cos... differ between glibc and newlib, so the core calls tv::math (float_math.h) instead; only
  // sqrtf, ldexpf and lroundf (exact or correctly rounded by IEEE 754) stay the C library's.
  const std::regex double_type(R"(\bdouble\b)");
  const std::regex libm_call(
      R"(\b(std::)?(exp|exp2|expm1|log|log2|log10|log1p|pow|cos|sin|tan|cosh|sinh|tanh|acos|asin|atan|atan2|erf|sqrt|ldexp|floor|ceil|round|lround|fmod|cbrt|hypot)(f|l)?\s*\()");
  const std::regex allowed(R"(\b(sqrtf|ldexpf|lroundf)\s*\(|\bmath::(exp|log|cospi|powi)\s*\()");
  const int files = for_each_core_source([&](const fs::path& path, const std::string& stripped) {
    const std::string code = std::regex_replace(stripped, allowed, "allowed(");
    std::smatch m;
    EXPECT_FALSE(std::regex_search(code, m, double_type)) << path << " uses double";
    // float_math.h/.cpp declare and define tv::math::exp and friends under those names.
    if (path.stem() != "float_math") {
      EXPECT_FALSE(std::regex_search(code, m, libm_call)) << path << " calls the C library's \"" << m.str() << "\"";
    }
  });
  EXPECT_GT(files, 20);
}
