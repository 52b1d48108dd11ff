#include "link_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "host/link/link.h"
#include "host/model/model_io.h"
#include "sim_support.h"
#include "tv/train/presets.h"

namespace fs = std::filesystem;

namespace linktest {

PtyBoard::PtyBoard(const std::string& args, const std::string& bin) {
  dir_ = tvtest::temp_dir("ptyboard");
  const std::string cmd = "exec " + simtest::quote(tvtest::bin_path(bin)) + " --pty " + args + " >" +
                          simtest::quote(dir_ + "/out") + " 2>" + simtest::quote(dir_ + "/err") + " </dev/null";
  pid_ = fork();
  if (pid_ == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), (char*)nullptr);
    _exit(127);
  }
  // the first line of stdout is the port (bounded wait: tvsim boots in well under a second)
  for (int i = 0; i < 2000 && port_.empty(); ++i) {
    const std::string out = tvtest::read_text(dir_ + "/out");
    const size_t nl = out.find('\n');
    if (nl != std::string::npos) port_ = out.substr(0, nl);
    int status = 0;
    if (port_.empty() && waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      break;
    }
    if (port_.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

PtyBoard::~PtyBoard() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  int status = 0;
  waitpid(pid_, &status, 0);
}

std::string PtyBoard::err() const {
  return tvtest::read_text(dir_ + "/err");
}

tvtest::CommandResult tvlink(const std::string& args) {
  return tvtest::run_capture(simtest::quote(tvtest::bin_path("tvlink")) + " " + args);
}

std::string console(const std::string& port, const std::string& keys, const std::string& until, int count) {
  std::unique_ptr<tvh::SerialPort> p = tvh::open_serial(port);
  p->write((const uint8_t*)keys.data(), keys.size());
  std::string seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto occurrences = [&] {
    int n = 0;
    for (size_t at = seen.find(until); at != std::string::npos; at = seen.find(until, at + 1)) ++n;
    return n;
  };
  while (occurrences() < count && std::chrono::steady_clock::now() < deadline) {
    uint8_t buf[4096];
    const size_t n = p->read(buf, sizeof buf, 100);
    seen.append((const char*)buf, n);
  }
  return seen;
}

std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> m;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) m[fs::relative(e.path(), dir).string()] = tvtest::read_text(e.path().string());
  return m;
}

std::string model_bytes(float w, const std::vector<std::string>& labels) {
  tv::ModelDesc d;
  tv::webmcu_model((int)labels.size(), &d);
  auto plan = tvh::plan_or_throw(d, "webmcu");
  std::vector<float> p(plan->param_count, w);
  const auto b = tvh::encode_float_blob(*plan, p.data(), labels, "tool=test\npreset=webmcu\n");
  return std::string(b.begin(), b.end());
}

}  // namespace linktest
