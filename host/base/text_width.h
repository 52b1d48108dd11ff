// Column widths of UTF-8 text in a terminal, for the tables the tools print (class names may be any
// language): a letter of most scripts takes one column, an East Asian wide character or an emoji two,
// a combining mark or a zero-width character none. Text is never cut inside a character.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace tvh {

// The columns `text` takes; an invalid UTF-8 byte counts as one column.
size_t text_width(const std::string& text);
// The longest prefix of `text` that fits in `columns`, cut between characters (a combining mark stays
// with its letter); when something is cut, the prefix ends in "~" (counted in `columns`).
std::string clip_to_width(const std::string& text, size_t columns);
// `text` followed (pad_right) or preceded (pad_left) by spaces up to `columns`; unchanged when wider.
std::string pad_right(const std::string& text, size_t columns);
std::string pad_left(const std::string& text, size_t columns);

// `rows` (the first is the header) as lines of columns sized from their content, one space apart:
// align[i] 'l' pads column i on the right, anything else on the left (numbers). No cell is ever cut
// or runs into its neighbour.
std::string format_table(const std::vector<std::vector<std::string>>& rows, const std::string& align);

}  // namespace tvh
