#include "test_support.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace tvtest {
namespace {
std::vector<std::string>& dirs_to_remove() {
  static std::vector<std::string> dirs;
  return dirs;
}
void remove_temp_dirs() {
  for (const auto& d : dirs_to_remove()) {
    std::error_code ec;
    fs::remove_all(d, ec);
  }
}
}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
}

std::string source_path(const std::string& rel) {
  return std::string(TV_SOURCE_DIR) + "/" + rel;
}

std::string shared_path(const std::string& rel) {
  const char* env = std::getenv("TV_SHARED_DIR");
  std::string base = env && *env ? env : TV_SHARED_DIR;
  std::string p = base + "/" + rel;
  std::error_code ec;
  if (!fs::exists(p, ec)) return "";
  return fs::canonical(p, ec).string();
}

std::string bin_path(const std::string& name) {
  return std::string(TV_BIN_DIR) + "/" + name;
}

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

std::string tool_command(const std::string& name) {
  return quoted(bin_path(name));
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

bool binary_exists(const std::string& name) {
  std::error_code ec;
  return fs::exists(bin_path(name), ec);
}

SmallDisk::SmallDisk(const std::string& tag, uint64_t free_bytes) {
  const std::string d = temp_dir(tag);
  if (d.empty() || geteuid() != 0) return;
  if (run_command("mount -t tmpfs -o size=" + std::to_string(free_bytes) + " tvtest " + tvtest::quoted(d) +
                  " 2>/dev/null") == 0)
    dir = d;
}

SmallDisk::~SmallDisk() {
  if (!dir.empty()) run_command("umount " + tvtest::quoted(dir));
}

std::string temp_dir(const std::string& tag) {
  static std::once_flag once;
  // Construct the list before registering the exit hook, so the list outlives the hook.
  std::call_once(once, [] {
    dirs_to_remove();
    std::atexit(remove_temp_dirs);
  });
  std::string tmpl = (fs::temp_directory_path() / ("tvtest-" + tag + "-XXXXXX")).string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char* made = mkdtemp(buf.data());
  if (!made) return "";
  dirs_to_remove().push_back(made);
  return made;
}

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

int run_command(const std::string& cmd, std::string* out, std::string* err) {
  std::string dir = temp_dir("cmd");
  std::string o = dir + "/out", e = dir + "/err";
  std::string full = "(" + cmd + ") >" + o + " 2>" + e + " </dev/null";
  int rc = std::system(full.c_str());
  if (out) *out = read_text(o);
  if (err) *err = read_text(e);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (rc == -1) return -1;
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}
CommandResult run_capture(const std::string& cmd) {
  CommandResult r;
  r.status = run_command(cmd, &r.out, &r.err);
  return r;
}

nlohmann::json run_json(const std::string& cmd, int* rc, std::string* err) {
  std::string out, e;
  const int code = run_command(cmd, &out, &e);
  if (rc) *rc = code;
  if (err) *err = e;
  if (code != 0) {
    if (!rc) ADD_FAILURE() << cmd << " exited " << code << ": " << e;
    return nlohmann::json();
  }
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded()) {
    ADD_FAILURE() << cmd << " printed no JSON: " << out.substr(0, 400);
    return nlohmann::json();
  }
  return j;
}

std::string shapes_subset(const std::string& tag, int per_class) {
  const std::string dir = temp_dir(tag);
  for (const char* c : {"0blank", "1circle", "2cross"}) {
    fs::create_directories(dir + "/" + c);
    std::vector<std::string> files;
    for (auto& e : fs::directory_iterator(source_path("datasets/shapes/") + c)) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (int i = 0; i < per_class && i < (int)files.size(); ++i)
      fs::copy_file(files[i], dir + "/" + c + "/" + fs::path(files[i]).filename().string());
  }
  return dir;
}

const char* const kEspdlGoldenFiles[kEspdlGemmFiles + 1] = {
    "esp32s3-linear_ishap_1_16_kshap_16_16_relu_s8.espdl",
    "esp32s3-linear_ishap_1_31_kshap_32_31_relu_s8.espdl",
    "esp32s3-linear_ishap_1_64_kshap_32_64_relu_s8.espdl",
    "c-linear_ishap_1_16_kshap_16_16_relu_s8.espdl",
    "c-linear_ishap_1_31_kshap_32_31_relu_s8.espdl",
    "c-linear_ishap_1_64_kshap_32_64_relu_s8.espdl",
    "mlp3-gemm-esp32s3.espdl",
    "streaming-conv-esp32s3.espdl",
};

std::string file_param_name(const ::testing::TestParamInfo<const char*>& info) {
  std::string s = info.param;
  s = s.substr(0, s.find('.'));
  for (char& c : s)
    if (!isalnum((unsigned char)c)) c = '_';
  return s;
}

std::set<std::string> regex_captures(const std::string& text, const std::string& pattern) {
  std::set<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

std::vector<uint8_t> decode_data_uri(const std::string& uri) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = uri.find(',') + 1; i < uri.size() && uri[i] != '='; ++i) {
    const size_t v = alphabet.find(uri[i]);
    if (v == std::string::npos) break;
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back((uint8_t)(acc >> bits));
    }
  }
  return out;
}

std::string thrown_message(const std::function<void()>& op) {
  try {
    op();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace tvtest
