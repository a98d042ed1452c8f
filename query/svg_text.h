// The two small pieces every SVG writer in query/ needs: text made safe for XML, and coordinates
// written short. Pure functions.
#pragma once

#include <string>
#include <string_view>

namespace trailmap {

// & < > " escaped for an XML attribute or text node.
std::string XmlEscape(std::string_view text);
// A coordinate with one decimal and no trailing ".0": 12 → "12", 12.25 → "12.3"; -0 → "0".
std::string SvgNumber(double value);

}  // namespace trailmap
