// The layering check. parts.cmake declares the parts of the tree in order and what each may include;
// this test reads every #include "..." of the tree, maps both files to their parts and fails naming the
// file and line of every include that goes where its part does not declare (a wrong-way include is one:
// the order is strict, a part only uses parts declared before it). It also fails on a file in no part,
// a declared use that no file needs, and an include loop between files (x.cpp/x.h counted as one).
// The checker is run on the real tree and on small scratch trees that break each rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_support.h"

namespace fs = std::filesystem;

namespace {

struct Part {
  std::string name;
  std::vector<std::string> folders;  // "a/b" (its files) or "a/b/**" (and every folder below)
  std::set<std::string> uses;
  bool any = false;  // may include every part (the tests, the fuzz targets)
};

// Where `#include "x"` is looked for after the including file's own folder: the build's include
// directories (CMakeLists.txt files: the tree's root, the core, the firmware's app and hardware layers,
// the tests' support).
const char* const kIncludeRoots[] = {"", "common/src", "firmware/app", "firmware/hal_sim", "firmware/hal_esp32",
                                     "tests"};

bool is_source(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".h" || e == ".cpp" || e == ".cc" || e == ".ino";
}

// Every tv_part(...) call of parts.cmake's text; a malformed or out-of-order declaration is a problem.
std::vector<Part> parse_parts(const std::string& text, std::vector<std::string>* problems) {
  std::string code;  // the text without comments
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '#')
      while (i < text.size() && text[i] != '\n') ++i;
    if (i < text.size()) code += text[i];
  }
  std::vector<Part> parts;
  std::set<std::string> declared;
  const std::regex call(R"(tv_part\s*\(([^)]*)\))");
  for (std::sregex_iterator it(code.begin(), code.end(), call), end; it != end; ++it) {
    std::vector<std::string> words;
    const std::string args = (*it)[1];
    const std::regex word(R"([^\s]+)");
    for (std::sregex_iterator w(args.begin(), args.end(), word); w != end; ++w) words.push_back(w->str());
    if (words.empty()) continue;
    Part p;
    p.name = words[0];
    std::string mode = "folders";
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w == "USES" || w == "LIBRARY") {
        mode = w;
      } else if (w == "ANY") {
        p.any = true;
      } else if (mode == "LIBRARY") {
        mode = "folders";
      } else if (mode == "USES") {
        if (!declared.count(w))
          problems->push_back("parts.cmake: part " + p.name + " uses " + w +
                              ", which is not declared above it (a part uses only parts below it)");
        p.uses.insert(w);
      } else {
        p.folders.push_back(w);
      }
    }
    if (!declared.insert(p.name).second) problems->push_back("parts.cmake: part " + p.name + " is declared twice");
    if (p.folders.empty()) problems->push_back("parts.cmake: part " + p.name + " names no folder");
    parts.push_back(p);
  }
  if (parts.empty()) problems->push_back("parts.cmake: no tv_part(...) declaration found");
  return parts;
}

// The part that holds `rel` (a path from the root): the part naming its folder, else the nearest folder
// above it named with "/**". -1 when none.
int part_of(const std::vector<Part>& parts, const std::string& rel) {
  const std::string dir = fs::path(rel).parent_path().generic_string();
  int best = -1;
  size_t best_len = 0;
  for (size_t i = 0; i < parts.size(); ++i)
    for (const std::string& f : parts[i].folders) {
      const bool deep = f.size() > 3 && f.compare(f.size() - 3, 3, "/**") == 0;
      const std::string base = deep ? f.substr(0, f.size() - 3) : f;
      const bool holds = deep ? (dir == base || dir.compare(0, base.size() + 1, base + "/") == 0) : dir == base;
      if (holds && (best < 0 || base.size() + (deep ? 0 : 1) > best_len)) {
        best = (int)i;
        best_len = base.size() + (deep ? 0 : 1);  // a folder's own files win over a "/**" above them
      }
    }
  return best;
}

struct Include {
  std::string from, to;  // paths from the root
  int line;
};

// Every include of `rel` that names a file of the tree (system headers and generated files are not).
std::vector<Include> includes_of(const fs::path& root, const std::string& rel) {
  std::vector<Include> out;
  const std::string text = tvtest::read_text((root / rel).string());
  const std::regex inc(R"(^\s*#\s*include\s*"([^"]+)\")");
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string l = text.substr(start, end - start);
    std::smatch m;
    if (std::regex_search(l, m, inc)) {
      std::vector<fs::path> tries = {fs::path(rel).parent_path() / m[1].str()};
      for (const char* r : kIncludeRoots) tries.push_back(fs::path(r) / m[1].str());
      for (const fs::path& t : tries) {
        const fs::path norm = t.lexically_normal();
        if (fs::is_regular_file(root / norm)) {
          out.push_back({rel, norm.generic_string(), line});
          break;
        }
      }
    }
    start = end + 1;
  }
  return out;
}

// The unit of a file: x.cpp and x.h are one.
std::string unit_of(const std::string& rel) {
  return (fs::path(rel).parent_path() / fs::path(rel).stem()).generic_string();
}

// Include loops between units (Tarjan's strongly connected components), each as its includes.
std::vector<std::string> include_loops(const std::vector<Include>& all) {
  std::map<std::string, std::vector<const Include*>> out_edges;
  for (const Include& i : all)
    if (unit_of(i.from) != unit_of(i.to)) out_edges[unit_of(i.from)].push_back(&i);
  std::map<std::string, int> index, low;
  std::vector<std::string> stack;
  std::set<std::string> on_stack;
  std::vector<std::string> loops;
  int counter = 0;
  std::function<void(const std::string&)> visit = [&](const std::string& v) {
    index[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack.insert(v);
    for (const Include* e : out_edges[v]) {
      const std::string w = unit_of(e->to);
      if (!index.count(w)) {
        visit(w);
        low[v] = std::min(low[v], low[w]);
      } else if (on_stack.count(w)) {
        low[v] = std::min(low[v], index[w]);
      }
    }
    if (low[v] != index[v]) return;
    std::set<std::string> members;
    std::string w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack.erase(w);
      members.insert(w);
    } while (w != v);
    if (members.size() < 2) return;
    std::string loop = "include loop between files (split what each side needs):";
    for (const std::string& m : members)
      for (const Include* e : out_edges[m])
        if (members.count(unit_of(e->to))) loop += " " + e->from + ":" + std::to_string(e->line) + " includes " + e->to + ";";
    loops.push_back(loop);
  };
  for (const auto& kv : out_edges)
    if (!index.count(kv.first)) visit(kv.first);
  return loops;
}

// Everything wrong with the tree at `root` against its parts.cmake, one sentence each.
std::vector<std::string> check_tree(const fs::path& root) {
  std::vector<std::string> problems;
  const std::vector<Part> parts = parse_parts(tvtest::read_text((root / "parts.cmake").string()), &problems);
  std::set<std::string> tops;  // the top folders the parts live in
  for (const Part& p : parts)
    for (const std::string& f : p.folders) tops.insert(fs::path(f).begin()->string());
  std::vector<std::string> files;
  for (const std::string& top : tops) {
    if (!fs::is_directory(root / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / top))
      if (e.is_regular_file() && is_source(e.path()))
        files.push_back(fs::relative(e.path(), root).generic_string());
  }
  std::sort(files.begin(), files.end());
  std::vector<Include> all;
  std::map<std::string, std::set<std::string>> used;  // part -> the parts its files include
  for (const std::string& f : files) {
    const int pf = part_of(parts, f);
    if (pf < 0) {
      problems.push_back(f + ": in no part of parts.cmake: add its folder to the part it belongs to "
                             "(docs/architecture.md says where each kind of code goes)");
      continue;
    }
    for (const Include& inc : includes_of(root, f)) {
      all.push_back(inc);
      const int pt = part_of(parts, inc.to);
      if (pt < 0 || pt == pf) continue;
      const Part& from = parts[(size_t)pf];
      const Part& to = parts[(size_t)pt];
      used[from.name].insert(to.name);
      if (from.any || from.uses.count(to.name)) continue;
      const bool upward = pt > pf;
      problems.push_back(f + ":" + std::to_string(inc.line) + ": includes " + inc.to + " of part " + to.name +
                         ", which part " + from.name + " may not include" +
                         (upward ? " (it comes after " + from.name + " in parts.cmake: a wrong-way include)"
                                 : " (not among its USES in parts.cmake)"));
    }
  }
  for (const Part& p : parts)
    for (const std::string& u : p.uses)
      if (!p.any && !used[p.name].count(u))
        problems.push_back("parts.cmake: part " + p.name + " declares it uses " + u +
                           ", but none of its files includes " + u + ": remove it");
  for (const std::string& loop : include_loops(all)) problems.push_back(loop);
  return problems;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

// A scratch tree: parts.cmake and files (path -> text).
fs::path scratch_tree(const std::string& tag, const std::string& parts, const std::map<std::string, std::string>& files) {
  const fs::path root = tvtest::temp_dir("layering-" + tag);
  tvtest::write_text((root / "parts.cmake").string(), parts);
  for (const auto& kv : files) {
    fs::create_directories((root / kv.first).parent_path());
    tvtest::write_text((root / kv.first).string(), kv.second);
  }
  return root;
}

const char* const kTwoParts =
    "tv_part(low  lib/low            USES)\n"
    "# a comment with tv_part(ignored)\n"
    "tv_part(high lib/high LIBRARY x USES low)\n"
    "tv_part(tests tests/** ANY)\n";

}  // namespace

TEST(Layering, TheTreeFollowsPartsCmake) {
  const std::vector<std::string> problems = check_tree(tvtest::source_path(""));
  EXPECT_TRUE(problems.empty()) << problems.size() << " problems:\n" << joined(problems);
}

TEST(Layering, TheTreeHasTheFoldersItsPartsName) {
  std::vector<std::string> problems;
  for (const Part& p : parse_parts(tvtest::read_text(tvtest::source_path("parts.cmake")), &problems))
    for (const std::string& f : p.folders) {
      const std::string dir = f.size() > 3 && f.compare(f.size() - 3, 3, "/**") == 0 ? f.substr(0, f.size() - 3) : f;
      EXPECT_TRUE(fs::is_directory(tvtest::source_path(dir))) << p.name << " names " << f << ", which is no folder";
    }
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

TEST(Layering, AScratchTreeThatFollowsItsPartsPasses) {
  const fs::path root = scratch_tree("clean", kTwoParts,
                                     {{"lib/low/b.h", "#pragma once\n"},
                                      {"lib/low/b.cpp", "#include \"lib/low/b.h\"\n"},
                                      {"lib/high/a.cpp", "// uses low\n#include \"lib/low/b.h\"\n#include <vector>\n"},
                                      {"tests/t.cpp", "#include \"lib/high/a.h\"\n#include \"lib/low/b.h\"\n"}});
  EXPECT_TRUE(check_tree(root).empty()) << joined(check_tree(root));
}

TEST(Layering, AWrongWayIncludeFailsNamingTheFileAndLine) {
  const fs::path root = scratch_tree("wrong-way", "tv_part(low lib/low)\ntv_part(high lib/high)\n",
                                     {{"lib/high/a.h", "#pragma once\n"},
                                      {"lib/high/a.cpp", "#include \"lib/high/a.h\"\n"},
                                      {"lib/low/b.h", "#pragma once\n"},
                                      {"lib/low/b.cpp", "#include \"lib/low/b.h\"\n\n#include \"../high/a.h\"\n"}});
  const std::vector<std::string> problems = check_tree(root);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(tvtest::contains(problems[0], "lib/low/b.cpp:3: includes lib/high/a.h of part high")) << problems[0];
  EXPECT_TRUE(tvtest::contains(problems[0], "wrong-way include")) << problems[0];
}

TEST(Layering, AnIncludeOfAnUndeclaredPartBelowFails) {
  const fs::path root = scratch_tree("undeclared",
                                     "tv_part(base lib/base)\ntv_part(low lib/low)\ntv_part(high lib/high USES low)\n",
                                     {{"lib/base/c.h", "#pragma once\n"},
                                      {"lib/low/b.h", "#pragma once\n"},
                                      {"lib/high/a.cpp", "#include \"lib/low/b.h\"\n#include \"lib/base/c.h\"\n"}});
  const std::vector<std::string> problems = check_tree(root);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(tvtest::contains(problems[0], "lib/high/a.cpp:2: includes lib/base/c.h of part base")) << problems[0];
  EXPECT_TRUE(tvtest::contains(problems[0], "not among its USES")) << problems[0];
}

TEST(Layering, AFileInNoPartAnUnusedUseAndAnOrderErrorFail) {
  const fs::path root = scratch_tree("declarations",
                                     "tv_part(high lib/high USES low)\ntv_part(low lib/low)\ntv_part(other lib/other "
                                     "USES low)\n",
                                     {{"lib/low/b.h", "#pragma once\n"},
                                      {"lib/high/a.cpp", "#include \"lib/low/b.h\"\n"},
                                      {"lib/other/o.cpp", "int o;\n"},
                                      {"lib/stray/s.cpp", "int s;\n"}});
  const std::string all = joined(check_tree(root));
  EXPECT_TRUE(tvtest::contains(all, "part high uses low, which is not declared above it")) << all;
  EXPECT_TRUE(tvtest::contains(all, "lib/stray/s.cpp: in no part of parts.cmake")) << all;
  EXPECT_TRUE(tvtest::contains(all, "part other declares it uses low, but none of its files includes low")) << all;
}

TEST(Layering, AnIncludeLoopBetweenFilesOfOnePartFails) {
  const fs::path root = scratch_tree("loop", kTwoParts,
                                     {{"lib/low/x.h", "#pragma once\n"},
                                      {"lib/low/x.cpp", "#include \"lib/low/x.h\"\n#include \"lib/low/y.h\"\n"},
                                      {"lib/low/y.h", "#pragma once\n"},
                                      {"lib/low/y.cpp", "#include \"lib/low/x.h\"\n"},
                                      {"lib/high/a.cpp", "#include \"lib/low/x.h\"\n"}});
  const std::vector<std::string> problems = check_tree(root);
  ASSERT_EQ(problems.size(), 1u) << joined(problems);
  EXPECT_TRUE(tvtest::contains(problems[0], "include loop between files")) << problems[0];
  EXPECT_TRUE(tvtest::contains(problems[0], "lib/low/x.cpp:2 includes lib/low/y.h")) << problems[0];
  EXPECT_TRUE(tvtest::contains(problems[0], "lib/low/y.cpp:1 includes lib/low/x.h")) << problems[0];
}
