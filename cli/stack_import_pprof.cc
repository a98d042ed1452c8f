#include "cli/stack_import_pprof.h"

#include <zlib.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "cli/pprof_profile.pb.h"
#include "core/counts.h"

namespace trailmap {
namespace {

// Inflates a gzip member (or several, concatenated) into `out`, at most kMaxPprofBytes.
Status Gunzip(std::string_view in, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Status::Corruption("zlib: cannot start");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(std::min<size_t>(in.size(), UINT32_MAX));
  char buffer[1 << 16];
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    out->append(buffer, sizeof buffer - z.avail_out);
    if (out->size() > kMaxPprofBytes) {
      inflateEnd(&z);
      return Status::InvalidArgument("the profile inflates past 256 MiB; refused");
    }
    if (rc == Z_STREAM_END && z.avail_in > 0) {
      inflateReset(&z);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;
  }
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    return Status::InvalidArgument(std::string("not a valid gzip stream (zlib: ") +
                                   (z.msg != nullptr ? z.msg : "truncated") + ")");
  }
  return Status::Ok();
}

std::string_view Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool LooksGzipped(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<PprofStacks> DecodePprof(std::string_view bytes, const PprofOptions& options) {
  std::string inflated;
  if (LooksGzipped(bytes)) {
    if (Status s = Gunzip(bytes, &inflated); !s.ok()) return s;
    bytes = inflated;
  }
  if (bytes.size() > kMaxPprofBytes) {
    return Status::InvalidArgument("the profile is larger than 256 MiB; refused");
  }
  pprof::Profile profile;
  if (!profile.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status::InvalidArgument(
        "not a pprof profile (profile.proto did not decode); expected a gzipped profile as "
        "written by runtime/pprof, async-profiler -o pprof or a Pyroscope SDK");
  }
  const auto& strings = profile.string_table();
  Status bad;
  const auto str = [&strings, &bad](int64_t index, const char* what) -> std::string_view {
    if (index < 0 || index >= strings.size()) {
      if (bad.ok()) {
        bad = Status::InvalidArgument(std::string(what) + " names string " + std::to_string(index) +
                                      " of a table of " + std::to_string(strings.size()));
      }
      return {};
    }
    return strings[static_cast<int>(index)];
  };

  PprofStacks out;
  out.time_nanos = profile.time_nanos();
  // The value to keep.
  int chosen = -1;
  for (int i = 0; i < profile.sample_type_size(); ++i) {
    const std::string type(str(profile.sample_type(i).type(), "a sample_type"));
    const std::string unit(str(profile.sample_type(i).unit(), "a sample_type unit"));
    out.sample_types.push_back(type + "/" + unit);
    if (!options.sample_type.empty()) {
      if (type == options.sample_type && chosen < 0) chosen = i;
    } else if (unit == "count" && chosen < 0) {
      chosen = i;
    }
  }
  if (!bad.ok()) return bad;
  if (profile.sample_type_size() == 0) {
    return Status::InvalidArgument("the profile has no sample_type: no value to import");
  }
  if (chosen < 0 && !options.sample_type.empty()) {
    std::string have;
    for (const std::string& t : out.sample_types) have += (have.empty() ? "" : ", ") + t;
    return Status::InvalidArgument("--sample-type " + options.sample_type + ": the profile has " +
                                   have);
  }
  if (chosen < 0) {
    chosen = profile.sample_type_size() - 1;
    for (int i = 0; i < profile.sample_type_size(); ++i) {
      if (profile.default_sample_type() != 0 &&
          profile.sample_type(i).type() == profile.default_sample_type()) {
        chosen = i;
        break;
      }
    }
  }
  out.sample_type = out.sample_types[static_cast<size_t>(chosen)];
  const std::string chosen_type(str(profile.sample_type(chosen).type(), "a sample_type"));

  // Frames of each location, innermost first, as the location lists them.
  std::unordered_map<uint64_t, std::string_view> filename_of_mapping;
  for (const pprof::Mapping& m : profile.mapping()) {
    filename_of_mapping[m.id()] = Basename(str(m.filename(), "a mapping's filename"));
  }
  std::unordered_map<uint64_t, std::string_view> name_of_function;
  for (const pprof::Function& f : profile.function()) {
    std::string_view name = str(f.name(), "a function's name");
    if (name.empty()) name = str(f.system_name(), "a function's system_name");
    name_of_function[f.id()] = name;
  }
  if (!bad.ok()) return bad;
  std::unordered_map<uint64_t, std::vector<std::string>> frames_of_location;
  for (const pprof::Location& loc : profile.location()) {
    std::vector<std::string>& frames = frames_of_location[loc.id()];
    frames.clear();
    for (int i = 0; i < loc.line_size(); ++i) {
      const auto it = name_of_function.find(loc.line(i).function_id());
      if (it == name_of_function.end()) {
        return Status::InvalidArgument("location " + std::to_string(loc.id()) + " names function " +
                                       std::to_string(loc.line(i).function_id()) +
                                       ", which the profile does not have");
      }
      std::string frame(it->second.empty() ? "[unknown]" : it->second);
      if (i + 1 < loc.line_size()) frame += "_[i]";
      frames.push_back(std::move(frame));
    }
    if (frames.empty()) {
      const auto m = filename_of_mapping.find(loc.mapping_id());
      frames.push_back(m == filename_of_mapping.end() || m->second.empty()
                           ? std::string("[unknown]")
                           : "[" + std::string(m->second) + "]");
    }
  }

  std::map<std::pair<FieldSet, std::vector<std::string>>, uint64_t> counts;
  std::pair<FieldSet, std::vector<std::string>> key;
  for (const pprof::Sample& sample : profile.sample()) {
    ++out.samples;
    if (sample.value_size() != profile.sample_type_size()) {
      return Status::InvalidArgument("sample " + std::to_string(out.samples) + " has " +
                                     std::to_string(sample.value_size()) + " values for " +
                                     std::to_string(profile.sample_type_size()) + " sample types");
    }
    const int64_t value = sample.value(chosen);
    if (value < 0) {
      ++out.negative_values;
      continue;
    }
    if (value == 0) continue;
    FieldSet& labels = key.first;
    labels.clear();
    for (const pprof::Label& label : sample.label()) {
      const std::string k(str(label.key(), "a label's key"));
      const std::string v = label.str() != 0 ? std::string(str(label.str(), "a label's value"))
                                             : std::to_string(label.num());
      const bool repeated =
          std::any_of(labels.begin(), labels.end(), [&k](const Field& f) { return f.first == k; });
      if (repeated || k == "sample_type" || !ValidateField(k, v).ok()) {
        ++out.labels_dropped;
        continue;
      }
      labels.emplace_back(k, v);
    }
    if (!bad.ok()) return bad;
    labels.emplace_back("sample_type", chosen_type);
    std::sort(labels.begin(), labels.end());
    std::vector<std::string>& frames = key.second;
    frames.clear();
    for (int i = sample.location_id_size(); i-- > 0;) {
      const auto it = frames_of_location.find(sample.location_id(i));
      if (it == frames_of_location.end()) {
        return Status::InvalidArgument("sample " + std::to_string(out.samples) +
                                       " names location " + std::to_string(sample.location_id(i)) +
                                       ", which the profile does not have");
      }
      frames.insert(frames.end(), it->second.rbegin(), it->second.rend());
    }
    if (frames.empty()) {
      ++out.empty_samples;  // no location: no stack to count it on
      continue;
    }
    uint64_t& count = counts[key];
    bool saturated = false;
    count = SaturatingCountAdd(count, static_cast<uint64_t>(value), &saturated);
  }
  if (!ValidateField("sample_type", chosen_type).ok()) {
    return Status::InvalidArgument("sample type '" + chosen_type +
                                   "' is not a valid field value (core/series.h)");
  }
  out.stacks.reserve(counts.size());
  for (auto& [k, count] : counts) out.stacks.push_back({k.first, k.second, count});
  return out;
}

}  // namespace trailmap
