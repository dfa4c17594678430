// The `kind` oneof fields of the set's messages, shared by the defaults
// (defaults.cc) and the conversion to the engine's definitions
// (conversion.cc). Internal to the loader.
#ifndef UTILITYD_LOADER_SRC_KIND_FIELDS_H_
#define UTILITYD_LOADER_SRC_KIND_FIELDS_H_

#include "google/protobuf/descriptor.h"
#include "utilityd/engine/tree.h"
#include "utilityd/v1/behaviour_set.pb.h"

namespace utilityd::loader::internal {

// The field of the curve's `kind` oneof that is set, or null. Every kind
// of the proto is registered in the engine under the field's name
// (set_loader_test checks it).
inline const google::protobuf::FieldDescriptor* KindField(const v1::Curve& c) {
  return c.GetReflection()->GetOneofFieldDescriptor(
      c, v1::Curve::descriptor()->FindOneofByName("kind"));
}

// The field of the node's `kind` oneof that is set, or null.
inline const google::protobuf::FieldDescriptor* KindField(
    const v1::TreeNode& node) {
  return node.GetReflection()->GetOneofFieldDescriptor(
      node, v1::TreeNode::descriptor()->FindOneofByName("kind"));
}

// The numeric parameters of a node's kind (its NodeParams), by name in the
// kind's message: `visit(field, param)` for each that the message has.
template <typename Message, typename Visit>
void ForNodeParams(Message& kind, engine::NodeKind k, Visit visit) {
  const google::protobuf::Descriptor* d = kind.GetDescriptor();
  for (const engine::NodeParam& p : engine::NodeParams(k)) {
    const google::protobuf::FieldDescriptor* f = d->FindFieldByName(p.name);
    if (f != nullptr) visit(f, p);
  }
}

}  // namespace utilityd::loader::internal

#endif  // UTILITYD_LOADER_SRC_KIND_FIELDS_H_
