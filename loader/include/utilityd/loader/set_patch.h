// Writes a behaviour set's edits into the text of the file it came from,
// keeping everything else as the author wrote it: comments, order, layout
// and the defaults the file leaves out. Only the values that changed are
// rewritten; a value the file omits is added to its mapping (in the
// mapping's own style); a curve whose kind changed is written whole, with
// only what differs from its kind's defaults.
//
//   absl::StatusOr<std::string> text = PatchSetText(original, path, edited);
//
// `edited` is the set as loaded (defaults written in, as GetBehaviourSet
// gives it) with the designer's changes. The patched text is loaded again
// and must give exactly `edited`; when it cannot (an edit inside a subtree
// the file reuses, a list that grew), the error names the field and the
// text is not returned.
#ifndef UTILITYD_LOADER_SET_PATCH_H_
#define UTILITYD_LOADER_SET_PATCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::loader {

[[nodiscard]] absl::StatusOr<std::string> PatchSetText(
    absl::string_view text, absl::string_view source,
    const v1::BehaviourSet& edited);

}  // namespace utilityd::loader

#endif  // UTILITYD_LOADER_SET_PATCH_H_
