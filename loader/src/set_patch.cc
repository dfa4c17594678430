// Edits written into the author's text (set_patch.h): the loaded set and
// the edited one are compared field by field; each changed value is found
// in the YAML by its path and its text replaced, or, when the file leaves
// it to its default, added to the nearest mapping the file has. The result
// is loaded again and must equal the edited set.
#include "utilityd/loader/set_patch.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "utilityd/base/status_macros.h"
#include "utilityd/loader/proto_writer.h"
#include "utilityd/loader/set_loader.h"

namespace utilityd::loader {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using google::protobuf::util::MessageDifferencer;

// One step of a path into a message: a field, and for a repeated field of
// messages the item (-1: the field as a whole).
struct Step {
  const FieldDescriptor* field;
  int index;
};
using Path = std::vector<Step>;

bool IsMessage(const FieldDescriptor* f) {
  return f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
}

// Whether `a` and `b` agree on field `f` (presence, value, every item).
bool FieldEquals(const Message& a, const Message& b, const FieldDescriptor* f) {
  std::unique_ptr<Message> x(a.New()), y(b.New());
  std::vector<const FieldDescriptor*> one = {f};
  x->CopyFrom(a);
  y->CopyFrom(b);
  for (Message* m : {x.get(), y.get()}) {
    const Descriptor* d = m->GetDescriptor();
    for (int i = 0; i < d->field_count(); ++i) {
      if (d->field(i) != f) m->GetReflection()->ClearField(m, d->field(i));
    }
  }
  return MessageDifferencer::Equals(*x, *y);
}

// Appends the path of every value of `b` that differs from `a`. A message
// whose oneof changed case, and a repeated field whose length changed, is
// one change as a whole.
void Diff(const Message& a, const Message& b, Path* at,
          std::vector<Path>* out) {
  const Descriptor* d = a.GetDescriptor();
  const Reflection* ra = a.GetReflection();
  const Reflection* rb = b.GetReflection();
  for (int i = 0; i < d->oneof_decl_count(); ++i) {
    const auto* oneof = d->oneof_decl(i);
    if (ra->GetOneofFieldDescriptor(a, oneof) !=
        rb->GetOneofFieldDescriptor(b, oneof)) {
      out->push_back(*at);
      return;
    }
  }
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    if (FieldEquals(a, b, f)) continue;
    at->push_back({f, -1});
    if (f->is_repeated() && IsMessage(f) && !f->is_map() &&
        ra->FieldSize(a, f) == rb->FieldSize(b, f)) {
      for (int k = 0; k < ra->FieldSize(a, f); ++k) {
        at->back().index = k;
        Diff(ra->GetRepeatedMessage(a, f, k), rb->GetRepeatedMessage(b, f, k),
             at, out);
      }
    } else if (!f->is_repeated() && IsMessage(f) && ra->HasField(a, f) &&
               rb->HasField(b, f)) {
      Diff(ra->GetMessage(a, f), rb->GetMessage(b, f), at, out);
    } else {
      out->push_back(*at);
    }
    at->pop_back();
  }
}

// "actions[eat].considerations[hunger].curve": items by name when they
// have one.
std::string PathName(const Message& root, const Path& path) {
  std::string out;
  const Message* m = &root;
  for (const Step& s : path) {
    if (!out.empty()) out += ".";
    out += s.field->name();
    if (s.index < 0) {
      if (IsMessage(s.field) && !s.field->is_repeated()) {
        m = &m->GetReflection()->GetMessage(*m, s.field);
      }
      continue;
    }
    m = &m->GetReflection()->GetRepeatedMessage(*m, s.field, s.index);
    const FieldDescriptor* name = m->GetDescriptor()->FindFieldByName("name");
    const std::string label =
        name != nullptr && name->type() == FieldDescriptor::TYPE_STRING
            ? m->GetReflection()->GetString(*m, name)
            : "";
    absl::StrAppend(&out, "[", label.empty() ? absl::StrCat(s.index) : label,
                    "]");
  }
  return out;
}

// The message holding the last step's field, following `path` in `root`.
Message* ParentOf(Message* root, const Path& path) {
  Message* m = root;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const Step& s = path[i];
    m = s.index < 0
            ? m->GetReflection()->MutableMessage(m, s.field)
            : m->GetReflection()->MutableRepeatedMessage(m, s.field, s.index);
  }
  return m;
}
const Message& ParentOf(const Message& root, const Path& path) {
  const Message* m = &root;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    const Step& s = path[i];
    m = s.index < 0
            ? &m->GetReflection()->GetMessage(*m, s.field)
            : &m->GetReflection()->GetRepeatedMessage(*m, s.field, s.index);
  }
  return *m;
}

// An empty message of `m`'s type choosing the same oneof cases, all the
// way down: what the defaults are filled into.
void Skeleton(const Message& m, Message* out) {
  std::vector<const FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->containing_oneof() != nullptr && IsMessage(f)) {
      Skeleton(m.GetReflection()->GetMessage(m, f),
               out->GetReflection()->MutableMessage(out, f));
    }
  }
}

// The fields of `value` that differ from `defaults`: what a file writes.
// A oneof's case is always written, even when all it holds is default.
void Minimal(const Message& value, const Message& defaults, Message* out) {
  std::vector<const FieldDescriptor*> fields;
  value.GetReflection()->ListFields(value, &fields);
  const Reflection* r = value.GetReflection();
  for (const FieldDescriptor* f : fields) {
    if (IsMessage(f) && !f->is_repeated() &&
        defaults.GetReflection()->HasField(defaults, f)) {
      Message* inner = out->GetReflection()->MutableMessage(out, f);
      Minimal(r->GetMessage(value, f),
              defaults.GetReflection()->GetMessage(defaults, f), inner);
      std::vector<const FieldDescriptor*> kept;
      inner->GetReflection()->ListFields(*inner, &kept);
      if (kept.empty() && f->containing_oneof() == nullptr) {
        out->GetReflection()->ClearField(out, f);
      }
      continue;
    }
    if (!FieldEquals(value, defaults, f)) {
      std::unique_ptr<Message> copy(value.New());
      copy->CopyFrom(value);
      out->GetReflection()->SwapFields(out, copy.get(), {f});
    }
  }
}

// Field `path.back()` of `edited` written as the file would: only what
// differs from the defaults that apply where it stands.
std::string Render(const v1::BehaviourSet& edited, const Path& path) {
  const Step& last = path.back();
  const Message& value_parent = ParentOf(edited, path);
  if (!IsMessage(last.field) || last.field->is_map()) {
    return WriteFieldYaml(value_parent, last.field, last.index);
  }
  // The same set with this value emptied to its skeleton, then defaulted.
  v1::BehaviourSet defaults = edited;
  Message* parent = ParentOf(&defaults, path);
  const Reflection* r = parent->GetReflection();
  auto skeleton = [&](const Message& value, Message* slot) {
    slot->Clear();
    Skeleton(value, slot);
  };
  if (last.field->is_repeated() && last.index < 0) {
    r->ClearField(parent, last.field);
    const int n =
        value_parent.GetReflection()->FieldSize(value_parent, last.field);
    for (int k = 0; k < n; ++k) {
      skeleton(value_parent.GetReflection()->GetRepeatedMessage(value_parent,
                                                                last.field, k),
               r->AddMessage(parent, last.field));
    }
  } else if (last.index >= 0) {
    skeleton(value_parent.GetReflection()->GetRepeatedMessage(
                 value_parent, last.field, last.index),
             r->MutableRepeatedMessage(parent, last.field, last.index));
  } else {
    skeleton(value_parent.GetReflection()->GetMessage(value_parent, last.field),
             r->MutableMessage(parent, last.field));
  }
  ApplyDefaults(&defaults);
  const Message& filled = ParentOf(static_cast<const Message&>(defaults), path);
  auto one = [&](const Message& value, const Message& base) {
    std::unique_ptr<Message> out(value.New());
    Minimal(value, base, out.get());
    return WriteFieldYaml(*out);
  };
  const Reflection* vr = value_parent.GetReflection();
  const Reflection* fr = filled.GetReflection();
  if (last.field->is_repeated() && last.index < 0) {
    std::string out = "[";
    for (int k = 0; k < vr->FieldSize(value_parent, last.field); ++k) {
      if (k > 0) out += ", ";
      out += one(vr->GetRepeatedMessage(value_parent, last.field, k),
                 fr->GetRepeatedMessage(filled, last.field, k));
    }
    return out + "]";
  }
  if (last.index >= 0) {
    return one(vr->GetRepeatedMessage(value_parent, last.field, last.index),
               fr->GetRepeatedMessage(filled, last.field, last.index));
  }
  return one(vr->GetMessage(value_parent, last.field),
             fr->GetMessage(filled, last.field));
}

// The author's text and where things are in it.
class Text {
 public:
  explicit Text(absl::string_view text) : text_(text) {
    starts_.push_back(0);
    for (size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') starts_.push_back(i + 1);
    }
  }

  // Byte offset of a node's first character.
  size_t At(const YAML::Node& n) const {
    return At(n.Mark().line, n.Mark().column);
  }
  size_t At(int line, int column) const {
    return std::min(text_.size(), starts_[line] + column);
  }

  // End of a scalar starting at `begin`; in a flow collection a plain
  // scalar also ends at , } or ].
  size_t ScalarEnd(size_t begin, bool flow) const {
    size_t i = begin;
    if (i < text_.size() && (text_[i] == '"' || text_[i] == '\'')) {
      const char q = text_[i++];
      while (i < text_.size()) {
        if (q == '"' && text_[i] == '\\') {
          i += 2;
          continue;
        }
        if (text_[i] == q) {
          if (q == '\'' && i + 1 < text_.size() && text_[i + 1] == q) {
            i += 2;
            continue;
          }
          return i + 1;
        }
        ++i;
      }
      return i;
    }
    while (i < text_.size() && text_[i] != '\n' &&
           !(flow && (text_[i] == ',' || text_[i] == '}' || text_[i] == ']')) &&
           !(text_[i] == '#' && i > begin && IsBlank(text_[i - 1]))) {
      ++i;
    }
    while (i > begin && IsBlank(text_[i - 1])) --i;
    return i;
  }

  // One past the } or ] closing the flow collection opening at `begin`.
  size_t FlowEnd(size_t begin) const {
    int depth = 0;
    for (size_t i = begin; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '"' || c == '\'') {
        i = ScalarEnd(i, true) - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        return i + 1;
      }
    }
    return text_.size();
  }

  // End of the last line of the block collection whose first entry is at
  // `line`, `column`: the lines after it that are blank, comments, or
  // indented deeper belong to it (and, for a mapping, those at its own
  // indentation; for a sequence, its other "-" items).
  size_t BlockEnd(int line, int column, bool sequence) const {
    size_t end = LineEnd(line);
    for (size_t l = line + 1; l < starts_.size(); ++l) {
      const size_t b = starts_[l];
      size_t i = b;
      while (i < text_.size() && text_[i] == ' ') ++i;
      if (i >= text_.size() || text_[i] == '\n' || text_[i] == '#') continue;
      const size_t indent = i - b;
      const bool belongs = indent > static_cast<size_t>(column) ||
                           (indent == static_cast<size_t>(column) &&
                            (!sequence || text_[i] == '-'));
      if (!belongs) break;
      end = LineEnd(l);
    }
    return end;
  }

  size_t LineEnd(size_t line) const {
    const size_t e = text_.find('\n', starts_[line]);
    return e == absl::string_view::npos ? text_.size() : e;
  }

  // One past the ':' after the key starting at `begin` (a field's name).
  size_t AfterColon(size_t begin) const {
    const size_t c = text_.find(':', begin);
    return c == absl::string_view::npos ? text_.size() : c + 1;
  }

  // The text a node occupies (a block collection: to its last line).
  std::pair<size_t, size_t> Span(const YAML::Node& n, bool in_flow) const {
    const size_t begin = At(n);
    if (n.IsScalar() || n.IsNull()) return {begin, ScalarEnd(begin, in_flow)};
    if (n.Style() == YAML::EmitterStyle::Flow) return {begin, FlowEnd(begin)};
    return {begin, BlockEnd(n.Mark().line, n.Mark().column, n.IsSequence())};
  }

 private:
  static bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

  absl::string_view text_;
  std::vector<size_t> starts_;
};

struct Edit {
  size_t begin;
  size_t end;
  std::string text;
};

// The entry of mapping `map` for field `f` (by its name or JSON name).
// yaml-cpp nodes are handles: reset() points one elsewhere, while `=`
// would write into the document.
bool Entry(const YAML::Node& map, const FieldDescriptor* f, YAML::Node* key,
           YAML::Node* value) {
  for (const auto& kv : map) {
    if (kv.first.IsScalar() && (kv.first.Scalar() == f->name() ||
                                kv.first.Scalar() == f->json_name())) {
      key->reset(kv.first);
      value->reset(kv.second);
      return true;
    }
  }
  return false;
}

// Writes `value` at field `path` of the YAML: over its text, or, where the
// file leaves the last field of the path unwritten, as a new entry of the
// mapping it belongs in (in that mapping's style).
absl::Status Locate(const YAML::Node& root, const Path& path, const Text& text,
                    const std::string& name, const std::string& value,
                    std::vector<Edit>* edits) {
  YAML::Node node(root);
  YAML::Node key;
  bool flow = false;  // `node` is inside a flow collection
  for (size_t s = 0; s < path.size(); ++s) {
    const Step& step = path[s];
    if (!node.IsMap()) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, ": the file does not hold it as a mapping"));
    }
    const bool block = node.Style() != YAML::EmitterStyle::Flow;
    YAML::Node found;
    const bool has = Entry(node, step.field, &key, &found);
    if (!has || found.IsNull()) {
      if (step.index >= 0 || s + 1 != path.size()) {
        return absl::FailedPreconditionError(
            absl::StrCat(name, ": the file does not list it"));
      }
      const std::string entry = absl::StrCat(step.field->name(), ": ", value);
      if (has) {  // "key:" with nothing after it
        const size_t at = text.AfterColon(text.At(key));
        edits->push_back({at, text.ScalarEnd(at, !block), " " + value});
      } else if (!block) {
        const size_t close = text.FlowEnd(text.At(node)) - 1;
        edits->push_back(
            {close, close, node.size() == 0 ? entry : ", " + entry});
      } else {
        const size_t end =
            text.BlockEnd(node.Mark().line, node.Mark().column, false);
        edits->push_back(
            {end, end,
             absl::StrCat("\n", std::string(node.Mark().column, ' '), entry)});
      }
      return absl::OkStatus();
    }
    node.reset(found);
    flow = flow || !block;
    if (step.index < 0) continue;
    if (!node.IsSequence() || node.size() <= static_cast<size_t>(step.index)) {
      return absl::FailedPreconditionError(
          absl::StrCat(name, ": the file does not list it"));
    }
    flow = flow || node.Style() == YAML::EmitterStyle::Flow;
    const YAML::Node& list = node;
    node.reset(list[step.index]);
    if (s + 1 == path.size()) {  // an item, replaced whole
      const auto [b, e] = text.Span(node, flow);
      edits->push_back({b, e, value});
      return absl::OkStatus();
    }
  }
  if (!node.IsScalar() && node.Style() != YAML::EmitterStyle::Flow) {
    // A block collection under its key becomes one flow line.
    const size_t after = text.AfterColon(text.At(key));
    edits->push_back({after, text.Span(node, flow).second, " " + value});
    return absl::OkStatus();
  }
  const auto [b, e] = text.Span(node, flow);
  edits->push_back({b, e, value});
  return absl::OkStatus();
}

// Keeps the outermost of paths where one contains another, and one of
// each path given twice.
void DropNested(std::vector<Path>* paths) {
  auto within = [](const Path& inner, const Path& outer) {
    if (inner.size() < outer.size()) return false;
    for (size_t i = 0; i < outer.size(); ++i) {
      if (inner[i].field != outer[i].field ||
          inner[i].index != outer[i].index) {
        return false;
      }
    }
    return true;
  };
  std::vector<Path> kept;
  for (const Path& p : *paths) {
    bool inside = false;
    for (const Path& q : *paths) {
      inside = inside || (p.size() > q.size() && within(p, q));
    }
    for (const Path& q : kept) inside = inside || within(p, q);  // the same
    if (!inside) kept.push_back(p);
  }
  *paths = std::move(kept);
}

// Cuts a path to the first field the file does not write: the value
// added is that field's, whole.
Path Writable(const YAML::Node& root, const Path& path) {
  YAML::Node node(root);
  for (size_t s = 0; s < path.size(); ++s) {
    YAML::Node key, found;
    if (!node.IsMap()) return path;
    if (!Entry(node, path[s].field, &key, &found) || found.IsNull()) {
      return Path(path.begin(), path.begin() + s + 1);
    }
    node.reset(found);
    if (path[s].index < 0) continue;
    if (!node.IsSequence() ||
        node.size() <= static_cast<size_t>(path[s].index)) {
      return path;
    }
    const YAML::Node& list = node;
    node.reset(list[path[s].index]);
  }
  return path;
}

// The set `text` loads as, without its revision.
absl::StatusOr<v1::BehaviourSet> Loaded(absl::string_view text,
                                        absl::string_view source) {
  absl::StatusOr<std::shared_ptr<const LoadedSet>> set =
      LoadSetText(text, source);
  if (!set.ok()) return set.status();
  v1::BehaviourSet out = (*set)->definition;
  out.clear_revision();
  return out;
}

// `text` with the values where `now` (what it loads as) differs from
// `after` written in.
absl::StatusOr<std::string> Patch(absl::string_view text,
                                  absl::string_view source,
                                  const v1::BehaviourSet& now,
                                  const v1::BehaviourSet& after) {
  std::vector<Path> changes;
  Path at;
  Diff(now, after, &at, &changes);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", e.what()));
  }
  for (Path& p : changes) p = Writable(root, p);
  DropNested(&changes);
  const Text where(text);
  std::vector<Edit> edits;
  for (const Path& p : changes) {
    if (p.empty()) {
      return absl::FailedPreconditionError(
          "the set's kind of content changed; export it whole");
    }
    UTILITYD_RETURN_IF_ERROR(
        Locate(root, p, where, PathName(after, p), Render(after, p), &edits));
  }
  std::sort(edits.begin(), edits.end(),
            [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  std::string out(text);
  size_t floor = out.size() + 1;
  for (const Edit& e : edits) {
    if (e.end > floor) return absl::InternalError("two edits of the same text");
    out.replace(e.begin, e.end - e.begin, e.text);
    floor = e.begin;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> PatchSetText(absl::string_view text,
                                         absl::string_view source,
                                         const v1::BehaviourSet& edited) {
  if (absl::EndsWith(source, ".json")) {
    return absl::FailedPreconditionError(absl::StrCat(
        source, ": a JSON file is not patched; only YAML keeps its layout"));
  }
  absl::StatusOr<std::shared_ptr<const LoadedSet>> wanted =
      LoadSetProto(edited, "behaviourSet");
  if (!wanted.ok()) return wanted.status();
  v1::BehaviourSet after = (*wanted)->definition;
  after.clear_revision();
  absl::StatusOr<v1::BehaviourSet> now = Loaded(text, source);
  if (!now.ok()) return now.status();
  // A value written can move a default that follows it (a factor's range
  // is its considerations' bookends): the next pass writes those out.
  std::string out(text);
  for (int pass = 0; pass < 3; ++pass) {
    absl::StatusOr<std::string> next = Patch(out, source, *now, after);
    if (!next.ok()) return next.status();
    out = *std::move(next);
    now = Loaded(out, source);
    if (!now.ok()) {
      return absl::InternalError(absl::StrCat(
          "the patched file does not load: ", now.status().message()));
    }
    std::vector<Path> left;
    Path at;
    Diff(*now, after, &at, &left);
    if (left.empty()) return out;
    if (pass == 2) {
      return absl::FailedPreconditionError(absl::StrCat(
          PathName(after, left.front()), ": this edit cannot be written into ",
          source,
          " keeping its layout (a subtree it reuses, or a list whose length "
          "changed)"));
    }
  }
  return out;
}

}  // namespace utilityd::loader
