// Writes a message as YAML that ReadMessage reads back to the same message:
// fields in their declaration order, only those set, enums by their short
// names, small messages of scalars in flow style ({factor: a, min: 0}).
//
//   std::string yaml = WriteMessageYaml(set);
#ifndef UTILITYD_LOADER_PROTO_WRITER_H_
#define UTILITYD_LOADER_PROTO_WRITER_H_

#include <string>

#include "google/protobuf/message.h"

namespace utilityd::loader {

[[nodiscard]] std::string WriteMessageYaml(
    const google::protobuf::Message& message);

// One value on one line, in flow style, as a patch writes it into a file:
// a field's value (`index` >= 0: one item of a repeated field) — a scalar,
// "[a, b]", "{kind: {x: 1}}" — or a whole message.
[[nodiscard]] std::string WriteFieldYaml(
    const google::protobuf::Message& message,
    const google::protobuf::FieldDescriptor* field, int index = -1);
[[nodiscard]] std::string WriteFieldYaml(
    const google::protobuf::Message& message);

}  // namespace utilityd::loader

#endif  // UTILITYD_LOADER_PROTO_WRITER_H_
