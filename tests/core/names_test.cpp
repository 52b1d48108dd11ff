// tv/names.h: which names a class folder may have and which two names FAT makes one folder.
#include "tv/names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

bool class_name_allowed(const std::string& s) {
  return tv::name_allowed(s.data(), s.size(), tv::kMaxClassNameBytes);
}
bool same_class_folder(const std::string& a, const std::string& b) {
  return tv::same_folder_name(a.data(), a.size(), b.data(), b.size());
}

}  // namespace

TEST(Names, AllowedNames) {
  for (const char* s : {"cup", "1Cup", "a b", "x.y", "...a", "tasse à café", "чашка", "杯子", "cup 😀", "-"})
    EXPECT_TRUE(class_name_allowed(s)) << s;
  EXPECT_TRUE(class_name_allowed(std::string(31, 'x')));
  EXPECT_FALSE(class_name_allowed(std::string(32, 'x')));
  EXPECT_FALSE(class_name_allowed(std::string(30, 'x') + "\xc3\xa0"));  // 32 bytes: the limit counts bytes
}

TEST(Names, RefusedNames) {
  const std::vector<std::string> refused = {
      "",        ".",  "..",    " ",   ". .", "a/b",  "a\\b",  "a:b",
      "a*",      "a?", "\"a\"", "<a>", "a|b", "a\tb", "a\x7f", std::string("a\0b", 3),
      "_unsure", "_"};
  for (const std::string& s : refused) EXPECT_FALSE(class_name_allowed(s)) << "'" << s << "'";
  for (const char* bad : {"\xff", "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\x80"})
    EXPECT_FALSE(class_name_allowed(bad)) << "invalid UTF-8";
}

TEST(Names, TheSameFolderAsFatFoldsNames) {
  EXPECT_TRUE(same_class_folder("cup", "CUP"));
  EXPECT_TRUE(same_class_folder("1Cup", "1cup."));
  EXPECT_TRUE(same_class_folder("cup", "cup . ."));
  EXPECT_TRUE(same_class_folder("tasse à café", "TASSE À CAFÉ"));  // Latin-1
  EXPECT_TRUE(same_class_folder("łódź", "ŁÓDŹ"));                  // Latin Extended-A
  EXPECT_TRUE(same_class_folder("чашка", "ЧАШКА"));                // Cyrillic
  EXPECT_TRUE(same_class_folder("ёж", "ЁЖ"));
  EXPECT_TRUE(same_class_folder("αβγ", "ΑΒΓ"));        // Greek
  EXPECT_TRUE(same_class_folder("ｃｕｐ", "ＣＵＰ"));  // full-width Latin
  EXPECT_TRUE(same_class_folder("ÿ", "Ÿ"));
  EXPECT_FALSE(same_class_folder("cup", "cups"));
  EXPECT_FALSE(same_class_folder("cup", "c up"));
  EXPECT_FALSE(same_class_folder("a", "á"));
  EXPECT_FALSE(same_class_folder("杯子", "杯"));
  EXPECT_FALSE(same_class_folder("\xff", "\xfe"));  // bytes that are no UTF-8 compare as they are
  EXPECT_TRUE(same_class_folder("\xff", "\xff"));
}

TEST(Names, ACorrectionIsTheBoardsPhotoNameWithAC) {
  const auto is = [](const std::string& p) { return tv::is_correction_photo(p.data(), p.size()); };
  for (const char* yes : {"img_3c.jpg", "cup/img_12c.jpg", "a\\b\\IMG_7C.JPG", "/images/cup/img_0c.png"})
    EXPECT_TRUE(is(yes)) << yes;
  for (const char* no : {"img_3.jpg", "img_c.jpg", "img_3c", "img_3c.", "img3c.jpg", "xmg_3c.jpg", "img_3cc.jpg",
                         "img_3c.jpg/x.jpg", "cup/photo_3c.jpg", "", "c.jpg", "img_-3c.jpg"})
    EXPECT_FALSE(is(no)) << no;
}
