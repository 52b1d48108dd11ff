// Helpers of the USB link tests: tvsim --pty as a child process, tvlink runs, the board's console.
#pragma once
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "test_support.h"

namespace linktest {

// `tvsim --pty ARGS` (or another simulator binary) running until the object goes away (SIGTERM).
class PtyBoard {
 public:
  explicit PtyBoard(const std::string& args, const std::string& bin = "tvsim");
  ~PtyBoard();
  PtyBoard(const PtyBoard&) = delete;
  PtyBoard& operator=(const PtyBoard&) = delete;
  // The pseudo-terminal's path ("" when tvsim did not start).
  const std::string& port() const { return port_; }
  // What tvsim wrote on stderr so far.
  std::string err() const;

 private:
  pid_t pid_ = -1;
  std::string dir_, port_;
};

// build/bin/tvlink ARGS.
tvtest::CommandResult tvlink(const std::string& args);
// Types `keys` on the board's console and returns what it prints until `until` has appeared `count`
// times (or 60 s have passed).
std::string console(const std::string& port, const std::string& keys, const std::string& until, int count = 1);
// Every regular file below dir (relative path -> bytes).
std::map<std::string, std::string> snapshot(const std::string& dir);
// The .tvb of a webmcu model of these classes with every weight `w` (different w, different bytes).
std::string model_bytes(float w, const std::vector<std::string>& labels);

}  // namespace linktest
