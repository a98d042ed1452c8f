#include "query/draw/svg_text.h"

#include <cstdio>

namespace trailmap {

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string SvgOpen(int width, int height, std::string_view background) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n"
         "<rect width=\"100%\" height=\"100%\" fill=\"" + std::string(background) + "\"/>\n";
}

std::string SvgHeading(int x, std::string_view title, std::string_view subtitle, std::string_view note) {
  const std::string at = "<text x=\"" + std::to_string(x) + "\" ";
  std::string out = at + "y=\"24\" font-size=\"16\" font-weight=\"bold\">" + XmlEscape(title) + "</text>\n";
  out += at + "y=\"44\" fill=\"#444444\">" + XmlEscape(subtitle) + "</text>\n";
  if (!note.empty()) out += at + "y=\"62\" fill=\"#a03000\">" + XmlEscape(note) + "</text>\n";
  return out;
}

std::string SvgNumber(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", value);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

}  // namespace trailmap
