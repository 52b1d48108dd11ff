// No output lands on a file the same command reads (issue 20): every output of tvtrain, tvquant and
// tvexport is compared with every input file (each photo of a folder dataset, calibration and test
// images, the config, the model) by device and inode after following links; refused before any work,
// one sentence naming both files, nothing written. Also: the free-space and writable-folder checks look at
// the folder a link points into and count every output; read-only files are refused; temporaries of a
// 250-character name fit NAME_MAX; only provably abandoned temporaries are removed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "host/base/error.h"
#include "host/base/files.h"
#include "test_support.h"

namespace fs = std::filesystem;

namespace {

using tvtest::contains;

// A float and an int8 model of the shapes classes, made by the real tools (1 epoch).
struct Models {
  std::string float_model, int8_model;
};
Models make_models(const std::string& dir, const std::string& ds) {
  Models m{dir + "/m.tvb", dir + "/m.q8.tvb"};
  tvtest::CommandResult r = tvtest::run_capture(tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) +
                                                " --preset webmcu --epochs 1 -q " + "--no-curve --no-confusion -o " +
                                                tvtest::quoted(m.float_model));
  EXPECT_EQ(r.status, 0) << r.err;
  r = tvtest::run_capture(tvtest::tool_command("tvquant") + " " + tvtest::quoted(m.float_model) + " --calib " +
                          tvtest::quoted(ds) + " -q -o " + tvtest::quoted(m.int8_model));
  EXPECT_EQ(r.status, 0) << r.err;
  return m;
}

}  // namespace

TEST(OutputsOntoInputs, AnOutputLinkedOntoAnyInputFileIsRefusedByEveryToolAndTheFileKept) {
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  TV_REQUIRE_BINARY("tvexport");
  const std::string ds = tvtest::shapes_subset("ooi-ds", 5), other = tvtest::shapes_subset("ooi-eval", 4);
  const std::string dir = tvtest::temp_dir("ooi");
  const Models m = make_models(dir, ds);
  const std::string photo = ds + "/1circle/img_002.jpg", eval_photo = other + "/2cross/img_001.jpg";
  const std::string config = dir + "/cfg.json";
  tvtest::write_text(config, "{}\n");
  const std::string photo_bytes = tvtest::read_text(photo), eval_bytes = tvtest::read_text(eval_photo);
  ASSERT_FALSE(photo_bytes.empty());
  struct Case {
    std::string link, target, cmd, says;
  };
  const std::string train = tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) + " --preset webmcu --epochs 1 ";
  const std::vector<Case> cases = {
      {"a.tvb", photo, train + "-o LINK", "-o LINK: it is the same file as the dataset image " + photo},
      {"b.svg", photo, train + "-o " + tvtest::quoted(dir + "/t1.tvb") + " --curve LINK",
       "same file as the dataset image"},
      {"c.svg", photo, train + "-o " + tvtest::quoted(dir + "/t2.tvb") + " --confusion LINK",
       "same file as the dataset image"},
      {"d.bin", photo, train + "-o " + tvtest::quoted(dir + "/t3.tvb") + " --raw-out LINK",
       "same file as the dataset image"},
      {"e.svg", config,
       train + "--config " + tvtest::quoted(config) + " -o " + tvtest::quoted(dir + "/t4.tvb") + " --curve LINK",
       "same file as --config"},
      {"f.tvb", photo,
       tvtest::tool_command("tvquant") + " " + tvtest::quoted(m.float_model) + " --calib " + tvtest::quoted(ds) +
           " -o LINK",
       "same file as the dataset image " + photo},
      {"g.tvb", eval_photo,
       tvtest::tool_command("tvquant") + " " + tvtest::quoted(m.float_model) + " --calib " + tvtest::quoted(ds) +
           " --eval-on " + tvtest::quoted(other) + " -o LINK",
       "same file as the dataset image " + eval_photo},
      {"h.tvb", photo,
       tvtest::tool_command("tvquant") + " prune " + tvtest::quoted(m.float_model) + " " + tvtest::quoted(ds) +
           " --epochs 0 -o LINK",
       "same file as the dataset image"},
      {"i.espdl", photo,
       tvtest::tool_command("tvexport") + " " + tvtest::quoted(m.int8_model) + " --test-images " + tvtest::quoted(ds) +
           " -o LINK",
       "same file as the dataset image"},
      {"j.h", config, tvtest::tool_command("tvexport") + " " + tvtest::quoted(m.float_model) + " -o LINK",
       ""},  // not an input: written
  };
  for (const Case& c : cases) {
    const std::string link = dir + "/" + c.link;
    fs::create_symlink(c.target, link);
    std::string cmd = c.cmd;
    cmd.replace(cmd.find("LINK"), 4, tvtest::quoted(link));
    std::string says = c.says;
    if (says.find("LINK") != std::string::npos) says.replace(says.find("LINK"), 4, link);
    const tvtest::CommandResult r = tvtest::run_capture(cmd);
    if (says.empty()) {
      EXPECT_EQ(r.status, 0) << cmd << "\n" << r.err;  // control: the check does not refuse everything
      fs::remove(link);
      tvtest::write_text(config, "{}\n");
      continue;
    }
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, says)) << cmd << "\n" << r.err;
    EXPECT_FALSE(contains(r.err, "epoch 1/") || contains(r.err, "calibrating")) << "refused after the work: " << cmd;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(tvtest::read_text(photo), photo_bytes) << cmd;
    EXPECT_EQ(tvtest::read_text(eval_photo), eval_bytes) << cmd;
    EXPECT_EQ(tvtest::read_text(config), "{}\n") << cmd;
  }
  for (const char* f : {"t1.tvb", "t2.tvb", "t3.tvb", "t4.tvb"}) EXPECT_FALSE(fs::exists(dir + "/" + f)) << f;
  // A hard link is the same file too.
  fs::create_hard_link(photo, dir + "/hard.tvb");
  const tvtest::CommandResult r = tvtest::run_capture(train + "-o " + tvtest::quoted(dir + "/hard.tvb"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "same file as the dataset image")) << r.err;
  EXPECT_EQ(tvtest::read_text(photo), photo_bytes);
}

TEST(OutputsOntoInputs, TheOneComparisonRefusesByIdentityNotByName) {
  const std::string dir = tvtest::temp_dir("ooi-lib");
  tvtest::write_text(dir + "/in.jpg", "x");
  fs::create_symlink(dir + "/in.jpg", dir + "/out.tvb");
  EXPECT_THROW(tvh::refuse_output_among_inputs({{"-o", dir + "/out.tvb"}}, {{"the photo", dir + "/in.jpg"}}),
               tvh::Error);
  // Another file, stdout and empty names never match.
  tvtest::write_text(dir + "/other.tvb", "y");
  EXPECT_NO_THROW(tvh::refuse_output_among_inputs({{"-o", dir + "/other.tvb"}, {"-o", "-"}, {"--curve", ""}},
                                                  {{"the photo", dir + "/in.jpg"}, {"stdin", "-"}}));
  // A new file is compared by its resolved name.
  EXPECT_NO_THROW(tvh::refuse_output_among_inputs({{"-o", dir + "/new.tvb"}}, {{"the photo", dir + "/in.jpg"}}));
}

// ---- where the output really lands: the folder a link points into, every output counted

TEST(OutputsOntoInputs, FreeSpaceIsCheckedInTheFolderALinkPointsInto) {
  // /dev/shm (a tmpfs) and the temp dir are two file systems of different free space on most machines.
  struct statvfs shm, tmp;
  const std::string dir = tvtest::temp_dir("ooi-space");
  if (statvfs("/dev/shm", &shm) != 0 || statvfs(dir.c_str(), &tmp) != 0 || shm.f_fsid == tmp.f_fsid)
    GTEST_SKIP() << "no /dev/shm on another file system here";
  const uint64_t shm_free = (uint64_t)shm.f_bavail * shm.f_frsize, tmp_free = (uint64_t)tmp.f_bavail * tmp.f_frsize;
  if (tmp_free <= shm_free + (64u << 20)) GTEST_SKIP() << "the temp dir has no more room than /dev/shm here";
  const std::string target = "/dev/shm/tv-ooi-" + std::to_string(getpid()) + ".tvb";
  tvtest::write_text(target, "old");
  fs::create_symlink(target, dir + "/link.tvb");
  const uint64_t need = shm_free + (32u << 20);  // fits the link's folder, not the target's
  try {
    tvh::check_output({"-o", dir + "/link.tvb"}, {}, need);
    ADD_FAILURE() << "the link's folder was checked, not the target's";
  } catch (const tvh::Error& e) {
    EXPECT_TRUE(contains(e.what(), "'/dev/shm'")) << e.what();
  }
  // Two outputs that each fit but not together are refused together, naming both.
  const std::string a = "/dev/shm/tv-ooi-a-" + std::to_string(getpid()) + ".tvb";
  const std::string b = "/dev/shm/tv-ooi-b-" + std::to_string(getpid()) + ".svg";
  try {
    tvh::check_outputs({{"-o", a}, {"the curve", b}}, {shm_free / 2 + (16u << 20), shm_free / 2 + (16u << 20)}, {});
    ADD_FAILURE() << "the outputs were not counted together";
  } catch (const tvh::Error& e) {
    EXPECT_TRUE(contains(e.what(), "-o " + a) && contains(e.what(), "the curve " + b)) << e.what();
  }
  EXPECT_NO_THROW(tvh::check_outputs({{"-o", a}, {"the curve", b}}, {1000, 1000}, {}));
  EXPECT_EQ(tvtest::read_text(target), "old");
  fs::remove(target);
}

// ---- read-only files, long names, temporaries

TEST(OutputsOntoInputs, AReadOnlyOutputIsRefusedNamingTheFile) {
  TV_REQUIRE_BINARY("tvexport");
  TV_REQUIRE_BINARY("tvtrain");
  const std::string ds = tvtest::shapes_subset("ooi-ro-ds", 4);
  const std::string dir = tvtest::temp_dir("ooi-ro");
  const Models m = make_models(dir, ds);
  tvtest::write_text(dir + "/model.h", "mine");
  chmod((dir + "/model.h").c_str(), 0444);
  tvtest::CommandResult r = tvtest::run_capture(tvtest::tool_command("tvexport") + " " + tvtest::quoted(m.float_model) +
                                                " -o " + tvtest::quoted(dir + "/model.h"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, dir + "/model.h") && contains(r.err, "read-only (mode 0444)")) << r.err;
  EXPECT_EQ(tvtest::read_text(dir + "/model.h"), "mine");
  // tvtrain finds it before training.
  tvtest::write_text(dir + "/ro.tvb", "mine");
  chmod((dir + "/ro.tvb").c_str(), 0444);
  r = tvtest::run_capture(tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) +
                          " --preset webmcu --epochs 1 -o " + tvtest::quoted(dir + "/ro.tvb"));
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "read-only")) << r.err;
  EXPECT_FALSE(contains(r.err, "epoch 1/")) << r.err;
  EXPECT_EQ(tvtest::read_text(dir + "/ro.tvb"), "mine");
  // Through a link too, and by the library function whoever calls it.
  fs::create_symlink(dir + "/model.h", dir + "/link.h");
  EXPECT_THROW(tvh::write_file_atomic(dir + "/link.h", std::string("x")), tvh::Error);
  EXPECT_EQ(tvtest::read_text(dir + "/model.h"), "mine");
  // Made writable, it is replaced (the refusal is about the mode, not the name).
  chmod((dir + "/model.h").c_str(), 0644);
  r = tvtest::run_capture(tvtest::tool_command("tvexport") + " " + tvtest::quoted(m.float_model) + " -o " +
                          tvtest::quoted(dir + "/model.h"));
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(OutputsOntoInputs, ALegal250CharacterNameIsWritten) {
  const std::string dir = tvtest::temp_dir("ooi-long");
  const std::string name = std::string(246, 'n') + ".tvb";  // 250 characters: legal on every Linux file system
  ASSERT_EQ(name.size(), 250u);
  EXPECT_NO_THROW(tvh::check_output({"-o", dir + "/" + name}, {}, 10));
  EXPECT_NO_THROW(tvh::write_file_atomic(dir + "/" + name, std::string("data")));
  EXPECT_EQ(tvtest::read_text(dir + "/" + name), "data");
  EXPECT_NO_THROW(tvh::write_file_atomic(dir + "/" + name, std::string("again")));  // over an existing file
  EXPECT_EQ(tvtest::read_text(dir + "/" + name), "again");
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  EXPECT_EQ(files, 1) << "a temporary was left behind";
}

TEST(OutputsOntoInputs, OnlyExactlyOurTemporariesOfDeadWritersAreRemoved) {
  const std::string dir = tvtest::temp_dir("ooi-tmp");
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  int ws = 0;
  waitpid(dead, &ws, 0);
  const std::string d = std::to_string(dead);
  const std::string ours_dead = dir + "/.out.h.tmp." + d + ".Qw34Er";
  // A user's files that only look like temporaries, and one of a live writer.
  const std::vector<std::string> kept = {
      dir + "/.out.h.tmp.backup",                                    // no PID: nothing proves its writer is gone
      dir + "/.out.h.tmp.Ab12Cd",                                    // the old unnamed form: the same
      dir + "/.out.h.tmp." + d + ".Qw34Er~",                         // one character more
      dir + "/.out.h.tmp." + d + ".my-cv",                           // not six letters or digits
      dir + "/.out.h.tmp.0" + d + ".Qw34Er",                         // a leading zero is not a PID we write
      dir + "/.out.h.tmp." + std::to_string(getppid()) + ".Zx56Cv",  // alive
  };
  tvtest::write_text(ours_dead, "partial");
  for (const std::string& f : kept) tvtest::write_text(f, "mine");
  tvh::write_file_atomic(dir + "/out.h", std::string("new"));
  EXPECT_FALSE(fs::exists(ours_dead)) << "an abandoned temporary was kept";
  for (const std::string& f : kept) EXPECT_TRUE(fs::exists(f)) << f << " was removed";
  // A temporary whose writer still holds its lock is not abandoned even if its PID is gone here (a writer
  // in another PID namespace): the lock is held by a child of this test.
  tvtest::write_text(ours_dead, "partial");
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  if (holder == 0) {
    const int fd = open(ours_dead.c_str(), O_RDONLY);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) _exit(1);
    if (write(ready[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  ASSERT_GT(holder, 0);
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  tvh::write_file_atomic(dir + "/out.h", std::string("newer"));
  EXPECT_TRUE(fs::exists(ours_dead)) << "a locked temporary was removed";
  kill(holder, SIGKILL);
  waitpid(holder, &ws, 0);
  tvh::write_file_atomic(dir + "/out.h", std::string("newest"));
  EXPECT_FALSE(fs::exists(ours_dead)) << "the lock is gone with its holder: abandoned";
}

TEST(OutputsOntoInputs, ADashIsStandardOutputOnlyWhereAToolWritesThere) {
  // "-" means standard output (tvexport -o -) and is never compared with the inputs as a file; an output
  // that only goes to a file refuses it as a usage error instead of writing a file named "-".
  TV_REQUIRE_BINARY("tvtrain");
  TV_REQUIRE_BINARY("tvquant");
  const std::string ds = tvtest::shapes_subset("ooi-dash-ds", 4);
  const std::string dir = tvtest::temp_dir("ooi-dash");
  const Models m = make_models(dir, ds);
  const std::string in_dir = "cd " + tvtest::quoted(dir) + " && ";
  const std::string train = in_dir + tvtest::tool_command("tvtrain") + " " + tvtest::quoted(ds) + " --epochs 1 ";
  const std::string quant =
      in_dir + tvtest::tool_command("tvquant") + " " + tvtest::quoted(m.float_model) + " --calib " + tvtest::quoted(ds);
  for (const std::string& cmd :
       {train + "-o -", train + "-o x.tvb --report -", train + "-o x.tvb --curve -", train + "-o x.tvb --confusion -",
        train + "--kfold 2 --report -", quant + " -o -", quant + " -o q.tvb --report -"}) {
    const tvtest::CommandResult r = tvtest::run_capture(cmd);
    EXPECT_EQ(r.status, 2) << cmd << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, "standard output")) << cmd << "\n" << r.err;
    EXPECT_FALSE(fs::exists(dir + "/-")) << cmd;
    EXPECT_FALSE(fs::exists(dir + "/x.tvb")) << cmd;
  }
}
