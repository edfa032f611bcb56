// The document layout engine.
#include "ir/pretty.h"

namespace shardscope::pp {
namespace {

Doc make(DocNode node) { return std::make_shared<const DocNode>(std::move(node)); }

bool fits(const Doc& doc, long width) {
  std::vector<const DocNode*> agenda = {doc.get()};
  while (width >= 0 && !agenda.empty()) {
    const DocNode* node = agenda.back();
    agenda.pop_back();
    switch (node->kind) {
      case DocNode::Kind::kNil: break;
      case DocNode::Kind::kText:
      case DocNode::Kind::kBreak: width -= static_cast<long>(node->text.size()); break;
      case DocNode::Kind::kConcat:
        for (auto it = node->children.rbegin(); it != node->children.rend(); ++it) agenda.push_back(it->get());
        break;
      case DocNode::Kind::kNest:
      case DocNode::Kind::kGroup: agenda.push_back(node->children[0].get()); break;
    }
  }
  return width >= 0;
}

}  // namespace

Doc nil() { return make({}); }
Doc text(std::string s) { return make({DocNode::Kind::kText, std::move(s), 0, {}}); }
Doc concat(std::vector<Doc> docs) {
  if (docs.size() == 1) return docs[0];
  return make({DocNode::Kind::kConcat, "", 0, std::move(docs)});
}
Doc brk(std::string flat_text) { return make({DocNode::Kind::kBreak, std::move(flat_text), 0, {}}); }
Doc nest(int indent, Doc child) { return make({DocNode::Kind::kNest, "", indent, {std::move(child)}}); }
Doc group(Doc child) { return make({DocNode::Kind::kGroup, "", 0, {std::move(child)}}); }
Doc operator+(Doc a, Doc b) { return concat({std::move(a), std::move(b)}); }

Doc join(const Doc& separator, const std::vector<Doc>& docs) {
  std::vector<Doc> parts;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    if (i != 0) parts.push_back(separator);
    parts.push_back(docs[i]);
  }
  return concat(std::move(parts));
}

std::string format(const Doc& doc, int width) {
  struct State {
    int indent;
    bool flat;
    const DocNode* node;
  };
  std::string out;
  long column = 0;
  std::vector<State> agenda = {{0, false, doc.get()}};
  while (!agenda.empty()) {
    const State state = agenda.back();
    agenda.pop_back();
    const DocNode* node = state.node;
    switch (node->kind) {
      case DocNode::Kind::kNil: break;
      case DocNode::Kind::kText:
        out += node->text;
        column += static_cast<long>(node->text.size());
        break;
      case DocNode::Kind::kConcat:
        for (auto it = node->children.rbegin(); it != node->children.rend(); ++it) {
          agenda.push_back({state.indent, state.flat, it->get()});
        }
        break;
      case DocNode::Kind::kBreak:
        if (state.flat) {
          out += node->text;
          column += static_cast<long>(node->text.size());
        } else {
          out += '\n';
          out += std::string(static_cast<std::size_t>(state.indent), ' ');
          column = state.indent;
        }
        break;
      case DocNode::Kind::kNest:
        agenda.push_back({state.indent + node->indent, state.flat, node->children[0].get()});
        break;
      case DocNode::Kind::kGroup:
        agenda.push_back({state.indent, fits(node->children[0], width - column), node->children[0].get()});
        break;
    }
  }
  return out;
}

}  // namespace shardscope::pp
