// The two small pieces every SVG writer in query/ needs: text made safe for XML, and coordinates
// written short. Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace trailmap {

// & < > " escaped for an XML attribute or text node.
std::string XmlEscape(std::string_view text);
// The start of every view's SVG: the XML declaration, the <svg> element of width × height with
// the views' font at 12 px, and a full-size background rect of `background` ("#ffffff").
std::string SvgOpen(int width, int height, std::string_view background = "#ffffff");
// The heading every grid view draws at x: a bold 16 px title, a grey subtitle, and a red note of
// what is not drawn (omitted when empty). Escapes the text.
std::string SvgHeading(int x, std::string_view title, std::string_view subtitle,
                       std::string_view note);
// A coordinate with one decimal and no trailing ".0": 12 → "12", 12.25 → "12.3"; -0 → "0".
std::string SvgNumber(double value);
// The same appended to `out`, for writers that build one large document in one buffer.
void AppendSvgNumber(double value, std::string* out);

}  // namespace trailmap
