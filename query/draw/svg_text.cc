#include "query/draw/svg_text.h"

#include <charconv>

namespace trailmap {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string SvgOpen(int width, int height, std::string_view background) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
         "<rect width=\"100%\" height=\"100%\" fill=\"" +
         std::string(background) + "\"/>\n";
}

std::string SvgHeading(int x, std::string_view title, std::string_view subtitle,
                       std::string_view note) {
  const std::string at = "<text x=\"" + std::to_string(x) + "\" ";
  std::string out =
      at + "y=\"24\" font-size=\"16\" font-weight=\"bold\">" + XmlEscape(title) + "</text>\n";
  out += at + "y=\"44\" fill=\"#444444\">" + XmlEscape(subtitle) + "</text>\n";
  if (!note.empty()) out += at + "y=\"62\" fill=\"#a03000\">" + XmlEscape(note) + "</text>\n";
  return out;
}

void AppendSvgNumber(double value, std::string* out) {
  // std::to_chars with a precision rounds as printf's "%.1f" does, without the locale and format
  // parsing that made snprintf most of the time of a large trails SVG.
  char buf[32];
  char* end = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, 1).ptr;
  if (end - buf >= 2 && end[-2] == '.' && end[-1] == '0') end -= 2;
  if (end - buf == 2 && buf[0] == '-' && buf[1] == '0') {
    out->push_back('0');
    return;
  }
  out->append(buf, end);
}

std::string SvgNumber(double value) {
  std::string s;
  AppendSvgNumber(value, &s);
  return s;
}

}  // namespace trailmap
