// The READMEs' command blocks, run as written. Every ```sh block of README.md and firmware/README.md is
// run line by line with bash, in order, in one working folder per README (what a reader's shell would
// carry from one block to the next), with build/bin on PATH and PORT set to a simulated board's
// pseudo-terminal (tvsim --pty's first line). A command that fails fails the test, naming the README,
// the line and what the command printed. The folders the READMEs' commands name are made first:
// card/ (a simulated SD card with two classes of photos), frames/ and crosses/ (camera frames), and
// links to the build and to datasets/. Lines that set up the machine or need a board are not run here,
// and the test says which and why.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "link_support.h"
#include "sim_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace simtest;

namespace {

struct DocCommand {
  int line;
  std::string text;
};

// The commands of every ```sh block of `markdown`, a line each (a trailing backslash joins lines).
std::vector<DocCommand> sh_commands(const std::string& markdown) {
  std::vector<DocCommand> out;
  bool in_sh = false;
  std::string pending;
  int pending_line = 0, n = 0;
  size_t start = 0;
  while (start <= markdown.size()) {
    size_t end = markdown.find('\n', start);
    if (end == std::string::npos) end = markdown.size();
    const std::string line = markdown.substr(start, end - start);
    start = end + 1;
    ++n;
    if (line.rfind("```", 0) == 0) {
      in_sh = !in_sh && line == "```sh";
      continue;
    }
    if (!in_sh) continue;
    if (pending.empty()) pending_line = n;
    if (!line.empty() && line.back() == '\\') {
      pending += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    pending += line;
    const size_t first = pending.find_first_not_of(" \t");
    if (first != std::string::npos && pending[first] != '#') out.push_back({pending_line, pending});
    pending.clear();
  }
  return out;
}

// Why a command is not run here ("" when it is): the machine's setup and CI run themselves; a board
// and its IDE are not here.
std::string not_run_why(const std::string& command) {
  const struct {
    const char* prefix;
    const char* why;
  } kNotHere[] = {
      {"bash scripts/quickstart.sh", "the first command: Tvtrain.ReadmeFirstCommandTrainsOnTheProjectDataset runs it"},
      {"bash scripts/test.sh", "the test command: CI runs it (and it runs this test)"},
      {"bash scripts/install-deps.sh", "installs Debian packages: CI's first stage"},
      {"cmake ", "builds the project: these tests run on the build"},
      {"pio ", "PlatformIO builds and flashes a board: none here (scripts/check-esp32.sh type-checks the sketch)"},
      {"arduino-cli ",
       "the Arduino toolchain and a board: neither here (scripts/check-esp32.sh type-checks the sketch)"},
  };
  const size_t first = command.find_first_not_of(" \t");
  for (const auto& n : kNotHere)
    if (command.compare(first, std::string(n.prefix).size(), n.prefix) == 0) return n.why;
  return "";
}

// A folder of the first `count` photos of each class of datasets/shapes, as class folders.
void copy_shapes(const std::string& to, const std::vector<std::string>& classes, size_t count) {
  for (const std::string& c : classes) {
    fs::create_directories(to + "/" + c);
    const std::vector<std::string> files = sorted_jpegs(shapes_dir() + "/" + c);
    for (size_t i = 0; i < count && i < files.size(); ++i)
      fs::copy_file(shapes_dir() + "/" + c + "/" + files[i], to + "/" + c + "/" + files[i]);
  }
}

// The working folder the READMEs' commands expect.
std::string docs_workdir(const std::string& tag) {
  const std::string work = tvtest::temp_dir(tag);
  fs::create_directories(work + "/build");
  fs::create_directory_symlink(fs::path(tvtest::bin_path("tvsim")).parent_path(), work + "/build/bin");
  fs::create_directory_symlink(tvtest::source_path("datasets"), work + "/datasets");
  copy_shapes(work + "/card/images", kShapes2, 12);
  copy_shapes(work + "/frames-src", {"0blank", "1circle", "2cross"}, 8);
  for (const char* dir : {"frames", "crosses"}) fs::create_directories(work + "/" + dir);
  for (const std::string& c : {std::string("0blank"), std::string("1circle"), std::string("2cross")})
    for (const std::string& f : sorted_jpegs(work + "/frames-src/" + c)) {
      fs::copy_file(work + "/frames-src/" + c + "/" + f, work + "/frames/" + c + "_" + f);
      if (c == "2cross") fs::copy_file(work + "/frames-src/" + c + "/" + f, work + "/crosses/" + f);
    }
  return work;
}

// Runs README `readme`'s commands; each failure is a test failure naming its line.
void walk_readme(const std::string& readme, const std::string& tag) {
  const std::vector<DocCommand> commands = sh_commands(tvtest::read_text(tvtest::source_path(readme)));
  ASSERT_FALSE(commands.empty()) << readme << " has no ```sh block";
  const std::string work = docs_workdir(tag);
  const std::string board_card = tvtest::temp_dir(tag + "-board");
  copy_shapes(board_card + "/images", kShapes2, 12);
  linktest::PtyBoard board("--sd " + quote(board_card));
  ASSERT_FALSE(board.port().empty()) << board.err();
  const std::string env = "cd " + quote(work) + " && export PORT=" + quote(board.port()) +
                          " PATH=" + quote(work + "/build/bin") + ":\"$PATH\"\n";
  const std::string script = work + "/.command.sh";
  int run = 0;
  for (const DocCommand& c : commands) {
    const std::string why = not_run_why(c.text);
    if (!why.empty()) {
      std::printf("%s:%d not run here (%s): %s\n", readme.c_str(), c.line, why.c_str(), c.text.c_str());
      continue;
    }
    std::string out, err;
    tvtest::write_text(script, env + c.text + "\n");  // as written: quotes and comments are the shell's
    const int status = tvtest::run_command("timeout 300 bash " + quote(script), &out, &err);
    EXPECT_EQ(status, 0) << readme << ":" << c.line << ": `" << c.text << "` failed\n" << out << err;
    ++run;
  }
  std::printf("%s: %d of %zu commands run\n", readme.c_str(), run, commands.size());
}

}  // namespace

TEST(DocsCommands, ReadmeCommandBlocksRunAsWritten) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  walk_readme("README.md", "docs-readme");
}

TEST(DocsCommands, FirmwareReadmeCommandBlocksRunAsWritten) {
  TV_REQUIRE_BINARY("tvsim");
  TV_REQUIRE_BINARY("tvlink");
  TV_REQUIRE_BINARY("tvexport");
  walk_readme("firmware/README.md", "docs-firmware");
}

TEST(DocsCommands, OnlyShBlocksAreCommandsAndBackslashesJoinLines) {
  const std::vector<DocCommand> c =
      sh_commands("text\n```\nnot a command\n```\n```sh\n# a comment\nls a \\\n  b\n\necho x  # note\n```\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].line, 7);
  EXPECT_EQ(c[0].text, "ls a    b");
  EXPECT_EQ(c[1].text, "echo x  # note");
  EXPECT_EQ(not_run_why("  bash scripts/test.sh"), "the test command: CI runs it (and it runs this test)");
  EXPECT_EQ(not_run_why("tvlink pull $PORT photos/"), "");
}
