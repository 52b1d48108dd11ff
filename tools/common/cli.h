// Command-line glue shared by tvtrain, tvquant and tvexport (header-only: each tool compiles it).
#pragma once
#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "host/base/error.h"
#include "host/base/files.h"
#include "host/base/numbers.h"
#include "host/base/suggest.h"
#include "tv/train/presets.h"

namespace tvcli {

// Ends every --help with the exit statuses.
inline void add_exit_status_footer(CLI::App& app) {
  app.footer(tvh::kExitStatusHelp);
}

inline void collect_option_names(const CLI::App& app, std::vector<std::string>* names) {
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names->push_back("--" + l);
    for (const std::string& s : o->get_snames()) names->push_back("-" + s);
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    collect_option_names(*sub, names);
}

inline void collect_unexpected(const CLI::App& app, std::vector<std::string>* args) {
  for (const std::string& a : app.remaining(true)) args->push_back(a);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) collect_unexpected(*sub, args);
}

// The option nearest to a mistyped one, or "" when none is a plausible typo. A one-character name
// ("-0") is one edit from every short option, so it gets no suggestion.
inline std::string suggest_option(const std::string& typed, const std::vector<std::string>& names) {
  const size_t dashes = typed.find_first_not_of('-');
  if (dashes == std::string::npos || typed.size() - dashes < 2) return "";
  return tvh::nearest_name(typed, names);
}

// Reports a parse failure and returns the exit status: 0 for --help/--version, 2 (usage) otherwise.
// An unexpected argument is named in one sentence each, an unknown option with the nearest known one
// ("did you mean --epochs?"); every other failure is CLI11's sentence.
inline int parse_failed(CLI::App& app, const CLI::ParseError& e, const std::string& tool) {
  if (e.get_exit_code() == 0) return app.exit(e);
  std::vector<std::string> names, args;
  collect_option_names(app, &names);
  collect_unexpected(app, &args);
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr || args.empty())
    std::fprintf(stderr, "%s: %s\n", tool.c_str(), tvh::visible(e.what()).c_str());
  else
    for (std::string a : args) {
      if (a.size() < 2 || a[0] != '-') {
        std::fprintf(stderr, "%s: unexpected argument '%s'.\n", tool.c_str(), tvh::visible(a).c_str());
        continue;
      }
      const size_t eq = a.find('=');
      if (eq != std::string::npos) a = a.substr(0, eq);
      const std::string near = suggest_option(a, names);
      std::fprintf(stderr, "%s: unknown option %s%s\n", tool.c_str(), tvh::visible(a).c_str(),
                   near.empty() ? "." : ("; did you mean " + near + "?").c_str());
    }
  std::fprintf(stderr, "Run %s --help for the options.\n", tool.c_str());
  return tvh::kExitUsage;
}

// Option checks: every number and every choice an option takes is read by the one strict reader of
// host/base/numbers.h (no NaN, no wrap-around, no "1e3" for a count), so a bad value is a usage error (2).
// A whole number from lo to hi.
inline CLI::Validator whole(uint64_t lo, uint64_t hi) {
  return CLI::Validator([lo, hi](std::string& s) { return tvh::whole_number_problem(s, lo, hi); },
                        "INT " + std::to_string(lo) + ".." + std::to_string(hi));
}
// A finite number from lo to hi.
inline CLI::Validator real(double lo, double hi) {
  return CLI::Validator([lo, hi](std::string& s) { return tvh::real_number_problem(s, lo, hi); }, "NUMBER");
}
// One of `names` (a near miss gets "did you mean").
inline CLI::Validator one_of(std::vector<std::string> names) {
  std::string desc;
  for (const std::string& n : names) desc += (desc.empty() ? "" : "|") + n;
  return CLI::Validator([names](std::string& s) { return tvh::choice_problem(s, names); }, desc);
}

// Ends --help with the exit statuses and parses the command line. Returns -1 when the command goes on,
// else the exit status to return: 0 after --help/--version, 2 for a command line that cannot work.
inline int parse(CLI::App& app, int argc, char** argv, const std::string& tool) {
  add_exit_status_footer(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failed(app, e, tool);
  }
  return -1;
}

// A progress line on stderr, unless the command runs with -q. Control bytes but newline and tab are
// written visibly (tvh::visible): a folder or file name a warning quotes can never drive the terminal.
struct StderrLog {
  bool quiet;
  void operator()(const std::string& line) const {
    if (!quiet) std::fprintf(stderr, "%s\n", tvh::visible(line).c_str());
  }
};

// Runs a tool's main body and turns what it throws into the tool's message and exit status:
// tvh::UsageError 2, any other error 1 (the message names the tool).
// Standard output is flushed and closed at the end and checked: results the disk refused (a full disk,
// /dev/full) are exit status 1 with a sentence, never a silent success.
inline int run_main(const char* tool, int (*body)(int, char**), int argc, char** argv) {
  int rc = tvh::kExitFailure;
  try {
    rc = body(argc, argv);
  } catch (const tvh::UsageError& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    rc = tvh::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    rc = tvh::kExitFailure;
  }
  const std::string out_error = tvh::close_stdout();
  if (!out_error.empty() && rc == tvh::kExitOk) {  // a failure already said its sentence
    std::fprintf(stderr, "%s: %s\n", tool, out_error.c_str());
    rc = tvh::kExitFailure;
  }
  return rc;
}

// One of the presets the core defines (tinyvision, webmcu, detect).
inline CLI::Validator preset_choice() {
  std::vector<std::string> names;
  for (const char* const* n = tv::preset_names(); *n; ++n) names.push_back(*n);
  return one_of(names);
}

}  // namespace tvcli
