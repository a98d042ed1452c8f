#include "query/views/flame.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "core/folded.h"

namespace trailmap {
namespace {

// Adds stacks one at a time. A child is found by (parent, name) in one hash map; the path of
// the previous stack is remembered so that sorted input (the usual case) mostly skips hashing.
class TreeBuilder {
 public:
  TreeBuilder() { tree_.nodes.push_back({"all", 0, 0, 0, {}}); }

  void Add(std::string_view stack, double count) {
    tree_.nodes[0].total += count;
    uint32_t node = 0;
    uint32_t depth = 0;
    bool on_previous_path = true;
    size_t start = 0;
    while (true) {
      const size_t semi = stack.find(';', start);
      const std::string_view frame =
          stack.substr(start, semi == std::string_view::npos ? semi : semi - start);
      ++depth;
      uint32_t child;
      if (on_previous_path && depth < path_.size() && tree_.nodes[path_[depth]].name == frame) {
        child = path_[depth];
      } else {
        on_previous_path = false;
        child = FindOrAddChild(node, frame, depth);
        path_.resize(depth);
        path_.push_back(child);
      }
      tree_.nodes[child].total += count;
      node = child;
      if (semi == std::string_view::npos) break;
      start = semi + 1;
    }
    if (path_.size() > depth + 1) path_.resize(depth + 1);
    tree_.nodes[node].self += count;
    tree_.max_depth = std::max(tree_.max_depth, depth);
  }

  // Adds a baseline stack: the same path, counting into FlameNode::baseline only.
  void AddBaseline(std::string_view stack, double count) {
    tree_.nodes[0].baseline += count;
    uint32_t node = 0;
    uint32_t depth = 0;
    size_t start = 0;
    while (true) {
      const size_t semi = stack.find(';', start);
      const std::string_view frame =
          stack.substr(start, semi == std::string_view::npos ? semi : semi - start);
      ++depth;
      node = FindOrAddChild(node, frame, depth);
      tree_.nodes[node].baseline += count;
      if (semi == std::string_view::npos) break;
      start = semi + 1;
    }
    path_.assign(1, 0);  // the remembered path may now be stale
  }

  FlameTree Finish() && {
    for (FlameNode& n : tree_.nodes) {
      std::sort(n.children.begin(), n.children.end(), [this](uint32_t a, uint32_t b) {
        return tree_.nodes[a].name < tree_.nodes[b].name;
      });
    }
    return std::move(tree_);
  }

  FlameTree& tree() { return tree_; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  uint32_t FindOrAddChild(uint32_t parent, std::string_view name, uint32_t depth) {
    key_.assign(reinterpret_cast<const char*>(&parent), sizeof parent);
    key_.append(name);
    if (auto it = children_.find(std::string_view(key_)); it != children_.end()) return it->second;
    const auto id = static_cast<uint32_t>(tree_.nodes.size());
    tree_.nodes.push_back({std::string(name), 0, 0, depth, {}});
    tree_.nodes[parent].children.push_back(id);
    children_.emplace(key_, id);
    return id;
  }

  FlameTree tree_;
  std::vector<uint32_t> path_{0};  // node ids of the previous stack, root first
  std::string key_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> children_;
};

// Calls add(stack, count) for each valid line; returns the number of invalid ones.
template <typename Fn>
uint64_t ForEachFoldedLine(std::string_view folded, Fn&& add) {
  uint64_t invalid = 0;
  ForEachFoldedTextLine(folded, [&](std::string_view text_line, uint64_t) {
    const FoldedLine line = SplitFoldedLine(text_line);
    if (line.blank()) return;
    double count = 0;
    if (line.stack.empty() || !ParseFoldedCount(line.count, &count)) {
      ++invalid;
      return;
    }
    add(line.stack, count);
  });
  return invalid;
}

}  // namespace

FlameTree BuildFlameTree(std::string_view folded) {
  TreeBuilder builder;
  const uint64_t invalid = ForEachFoldedLine(
      folded, [&](std::string_view stack, double count) { builder.Add(stack, count); });
  builder.tree().invalid_lines = invalid;
  return std::move(builder).Finish();
}

FoldedMap ParseFoldedMap(std::string_view folded, uint64_t* invalid) {
  FoldedMap out;
  const uint64_t bad = ForEachFoldedLine(folded, [&](std::string_view stack, double count) {
    if (auto it = out.find(stack); it != out.end()) {
      it->second += count;
    } else {
      out.emplace(std::string(stack), count);
    }
  });
  if (invalid != nullptr) *invalid = bad;
  return out;
}

namespace {
double Total(const FoldedMap& m) {
  double t = 0;
  for (const auto& [stack, count] : m) t += count;
  return t;
}
double Scale(const FoldedMap& baseline, const FoldedMap& target, bool normalize) {
  const double b = Total(baseline);
  return normalize && b > 0 ? Total(target) / b : 1.0;
}
}  // namespace

FlameTree BuildDiffFlameTree(const FoldedMap& baseline, const FoldedMap& target, bool normalize) {
  TreeBuilder builder;
  for (const auto& [stack, count] : target) builder.Add(stack, count);
  const double scale = Scale(baseline, target, normalize);
  for (const auto& [stack, count] : baseline) builder.AddBaseline(stack, count * scale);
  FlameTree& tree = builder.tree();
  tree.differential = true;
  tree.baseline_total = Total(baseline);
  tree.baseline_scale = scale;
  return std::move(builder).Finish();
}

std::string FormatDiffFolded(const FoldedMap& baseline, const FoldedMap& target, bool normalize) {
  const double scale = Scale(baseline, target, normalize);
  auto number = [](double v) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.3f", v);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
  };
  std::string out;
  auto b = baseline.begin();
  auto t = target.begin();
  while (b != baseline.end() || t != target.end()) {
    const bool take_b = t == target.end() || (b != baseline.end() && b->first <= t->first);
    const bool take_t = b == baseline.end() || (t != target.end() && t->first <= b->first);
    out += take_b ? b->first : t->first;
    out += ' ';
    out += number(take_b ? b->second * scale : 0);
    out += ' ';
    out += number(take_t ? t->second : 0);
    out += '\n';
    if (take_b) ++b;
    if (take_t) ++t;
  }
  return out;
}

FlameTree BuildFlameTree(const FoldedStacks& stacks) {
  TreeBuilder builder;
  for (const FoldedStack& s : stacks) builder.Add(s.stack, static_cast<double>(s.count));
  return std::move(builder).Finish();
}

}  // namespace trailmap
