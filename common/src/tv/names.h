// Class names as folder names on the board's FAT card: the one rule for which names a class may have and
// which two names are the same folder. The board's New class, capture and Learn, the labels of a pushed
// model, tvtrain --rename and tvlink's pull destinations all ask it. Also the board's class count.
//
// Allowed: 1 to max_bytes bytes of valid UTF-8 (FAT stores long names as UTF-16), no control character,
// none of / \ : * ? " < > | (FAT refuses them), not only dots and spaces ("." and ".." name folders
// already), and not starting with '_': such folders are the board's own (/images/_unsure), never classes,
// on the board and in tvtrain. The same folder: FAT ignores trailing dots and spaces, and letter case as FatFs up-cases
// long names: ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic and full-width Latin letters.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "tv/build_config.h"

namespace tv {

// The classes a model the board's firmware runs may have (its menu, its label table, its folders).
constexpr int kBoardMinClasses = 2;
constexpr int kBoardMaxClasses = 16;

// The longest class name the board keeps as a folder name and a label (bytes of UTF-8).
constexpr int kMaxClassNameBytes = 31;
// The rule in one sentence, for refusals: "'NAME' cannot name a class folder: <rule>".
constexpr const char* kClassNameRule =
    "1 to 31 bytes of UTF-8, none of / \\ : * ? \" < > | or control characters, not only dots and spaces, not "
    "starting with _";
static_assert(kMaxClassNameBytes == 31, "kClassNameRule states the limit");

bool name_allowed(const char* text, size_t len, size_t max_bytes);

// The board names its photos img_<n>.jpg and a correction from the field img_<n>c.jpg (firmware/app/
// corrections.cpp). True when the last component of `path` (after '/' or '\\') is a correction's name:
// "img_", digits, 'c', then '.' and an extension; letter case ignored. The reference split trains on
// every correction (tv/train/train_session.h).
bool is_correction_photo(const char* path, size_t len);
bool same_folder_name(const char* a, size_t la, const char* b, size_t lb);

}  // namespace tv
