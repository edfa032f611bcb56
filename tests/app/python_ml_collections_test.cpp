// Tests of the embedded ml_collections package: ConfigDict, FrozenConfigDict and FieldReference in cells.

// Each printed text is what ml_collections 1.1.0 prints for the same cell (YAML str/repr, key order, errors).
#include <doctest/doctest.h>

#include <string>

#include "app/python_test_support.h"
#include "python/host.h"

using python_test::printed;
using shardscope::python::CellResult;
using shardscope::python::run_cell;

TEST_CASE("ConfigDict turns nested dicts into ConfigDicts and prints them as the library's YAML") {
  REQUIRE(run_cell("from ml_collections import ConfigDict\n"
                   "cfg = ConfigDict({'model': {'depth': 12, 'width': 768.0, 'act': 'gelu'}, 'lr': 1e-3, 'name': "
                   "'vit',\n"
                   "                  'layers': [1, 2, [3, 4]], 'shape': (1, 2), 'dropout': None, 'flag': True})\n")
              .ok());
  CHECK(printed("print(type(cfg.model).__name__, cfg.model.depth, cfg['model']['width'], cfg['model.act'])\n") ==
        "ConfigDict 12 768.0 gelu\n");
  CHECK(printed("print(cfg)\n") ==
        "dropout: null\n"
        "flag: true\n"
        "layers:\n"
        "- 1\n"
        "- 2\n"
        "- - 3\n"
        "  - 4\n"
        "lr: 0.001\n"
        "model:\n"
        "  act: gelu\n"
        "  depth: 12\n"
        "  width: 768.0\n"
        "name: vit\n"
        "shape: !!python/tuple\n"
        "- 1\n"
        "- 2\n"
        "\n");
  CHECK(printed("print(repr(cfg.model))\n") ==
        "act: gelu\n"
        "depth: 12\n"
        "width: 768.0\n"
        "\n");
  CHECK(printed("print(str(ConfigDict()), repr(ConfigDict()), len(ConfigDict()), bool(ConfigDict()))\n") ==
        "{}\n"
        " {}\n"
        " 0 False\n");
  CHECK(printed("print(ConfigDict({'b': 1, 'a': {'d': 2, 'c': 3}}, sort_keys=False).keys(), end=' ')\n"
                "print(ConfigDict({'b': 1, 'a': 2}, sort_keys=False))\n") ==
        "['b', 'a'] a: 2\n"
        "b: 1\n"
        "\n");
  CHECK(printed("print(ConfigDict({'a.b': 1, 'n': {'c.d': 2}}, allow_dotted_keys=True)['a.b'], ConfigDict({2: "
                "'b', 1: 'a'}))\n") ==
        "1 1: a\n"
        "2: b\n"
        "\n");
  CHECK(printed("import abc\n"
                "print(ConfigDict({'cls': abc.ABC, 'type': int, 'fn': len}))\n") ==
        "cls: !!python/name:abc.ABC ''\n"
        "fn: !!python/name:builtins.len ''\n"
        "type: !!python/name:builtins.int ''\n"
        "\n");
}

TEST_CASE("ConfigDict iterates, and lists keys, values and items, in sorted key order") {
  REQUIRE(run_cell("from ml_collections import ConfigDict\n"
                   "cfg = ConfigDict({'b': 2, 'a': {'y': 1, 'x': 0}, 'c': [3]})\n")
              .ok());
  CHECK(printed("print(cfg.keys(), list(cfg), len(cfg))\n") == "['a', 'b', 'c'] ['a', 'b', 'c'] 3\n");
  CHECK(printed("print(cfg.values())\n") ==
        "[x: 0\n"
        "y: 1\n"
        ", 2, [3]]\n");
  CHECK(printed("print(cfg.items())\n") ==
        "[('a', x: 0\n"
        "y: 1\n"
        "), ('b', 2), ('c', [3])]\n");
  CHECK(printed("print(cfg.items(preserve_field_references=True), cfg.iterkeys())\n") ==
        "odict_items([('a', x: 0\n"
        "y: 1\n"
        "), ('b', 2), ('c', [3])]) odict_keys(['a', 'b', 'c'])\n");
  CHECK(printed("print(list(cfg.iteritems())[0], list(cfg.itervalues())[1])\n") ==
        "('a', x: 0\n"
        "y: 1\n"
        ") 2\n");
  CHECK(printed("print('a' in cfg, 'z' in cfg, 'a.x' in cfg, cfg.get('b'), cfg.get('z'), cfg.get('z', 7), "
                "cfg.get('a.y'))\n") == "True False False 2 None 7 1\n");
  CHECK(printed("print(dict(cfg)['c'], (lambda **kw: sorted(kw))(**cfg))\n") == "[3] ['a', 'b', 'c']\n");
  CHECK(printed("print([name for name in dir(cfg) if not name.startswith('__')])\n") ==
        "['_HAS_DYNAMIC_ATTRIBUTES', '_ensure_mutability', '_generate_did_you_mean_message', "
        "'_json_dumps_wrapper', '_ordered_fields', '_update_value', 'a', 'allow_dotted_keys', 'b', 'c', "
        "'convert_dict', 'copy_and_resolve_references', 'eq_as_configdict', 'get', 'get_oneway_ref', "
        "'get_ref', 'get_type', 'ignore_type', 'is_locked', 'is_type_safe', 'items', 'iteritems', "
        "'iterkeys', 'itervalues', 'keys', 'lock', 'to_dict', 'to_json', 'to_json_best_effort', "
        "'to_yaml', 'unlock', 'unlocked', 'update', 'update_from_flattened_dict', 'values']\n");
}

TEST_CASE("ConfigDict keeps each field's type with the library's TypeError") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import ConfigDict\n"
                   "cfg = ConfigDict({'lr': 0.1, 'steps': 10, 'name': 'adam', 'betas': (0.9, 0.99), 'sizes': [1, "
                   "2],\n"
                   "                  'model': {'depth': 2}, 'extra': None})\n")
              .ok());
  CHECK(printed("attempt(lambda: setattr(cfg, 'lr', 'fast'))\n"
                "attempt(lambda: setattr(cfg, 'steps', 2.5))\n"
                "attempt(lambda: cfg.__setitem__('name', 3))\n"
                "attempt(lambda: setattr(cfg, 'model', 3))\n"
                "attempt(lambda: setattr(cfg.model, 'depth', '2'))\n") ==
        "TypeError Could not override field 'lr' (reference). fast is of original type <class 'str'> and "
        "cannot be casted to type <class 'float'>\n"
        "TypeError Could not override field 'steps' (reference). 2.5 is of original type <class 'float'> "
        "and cannot be casted to type <class 'int'>\n"
        "TypeError Could not override field 'name' (reference). 3 is of original type <class 'int'> and "
        "cannot be casted to type <class 'str'>\n"
        "TypeError Could not override field 'model' (reference). 3 is of original type <class 'int'> and "
        "cannot be casted to type <class 'ml_collections.config_dict.config_dict.ConfigDict'>\n"
        "TypeError Could not override field 'depth' (reference). 2 is of original type <class 'str'> and "
        "cannot be casted to type <class 'int'>\n");
  CHECK(printed("cfg.lr = 1\n"
                "cfg.betas = [0.8, 0.9]\n"
                "cfg.sizes = (3, 4)\n"
                "print(cfg.lr, type(cfg.lr).__name__, cfg.betas, cfg.sizes)\n") == "1.0 float (0.8, 0.9) [3, 4]\n");
  CHECK(printed("cfg.extra = 'now a string'\n"
                "cfg.name = None\n"
                "print(cfg.extra, cfg.name)\n"
                "cfg.name = 5\n"
                "print(cfg.name)\n") ==
        "now a string None\n"
        "5\n");
  CHECK(printed("cfg.model = {'width': 4}\n"
                "print(type(cfg.model).__name__, cfg.model.to_dict())\n") == "ConfigDict {'width': 4}\n");
  CHECK(printed("loose = ConfigDict({'a': 1}, type_safe=False)\n"
                "loose.a = 'x'\n"
                "print(loose.a, loose.is_type_safe, type(ConfigDict({'d': {}}, convert_dict=False).d).__name__)\n") ==
        "x False dict\n");
  CHECK(printed("with cfg.ignore_type():\n"
                "    cfg.steps = 'many'\n"
                "    cfg.model.width = 'wide'\n"
                "    print(cfg.is_type_safe, cfg.model.is_type_safe)\n"
                "print(cfg.steps, cfg.model.width, cfg.is_type_safe, cfg.model.is_type_safe)\n") ==
        "False False\n"
        "many wide True True\n");
  CHECK(printed("attempt(lambda: cfg.__setitem__('a.b', 1))\n"
                "attempt(lambda: setattr(cfg, '__init__', 1))\n"
                "attempt(lambda: delattr(cfg, '__class__'))\n") ==
        "ValueError ConfigDict does not accept dots in field names (when `allow_dotted_keys=False`), but "
        "the key a.b contains one.\n"
        "AttributeError '__init__ cannot be overridden.'\n"
        "AttributeError '__class__ cannot be overridden.'\n");
}

TEST_CASE("missing fields raise the library's AttributeError and KeyError with its did-you-mean hint") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import ConfigDict\n"
                   "cfg = ConfigDict({'learning_rate': 0.1, 'model': {'depth': 2}})\n")
              .ok());
  CHECK(printed("attempt(lambda: cfg.learning_rat)\n"
                "attempt(lambda: cfg.batch_size)\n"
                "attempt(lambda: cfg['learnin_rate'])\n"
                "attempt(lambda: cfg['batch_size'])\n"
                "attempt(lambda: cfg['model.dept'])\n"
                "attempt(lambda: delattr(cfg, 'learning_rte'))\n"
                "attempt(lambda: cfg.__delitem__('zzz'))\n"
                "attempt(lambda: cfg.get_type('modl'))\n") ==
        "AttributeError '\\'learning_rat\\'\\nDid you mean \"learning_rate\" instead of \"learning_rat\"?'\n"
        "AttributeError \"'batch_size'\"\n"
        "KeyError '\\'learnin_rate\\'\\nDid you mean \"learning_rate\" instead of \"learnin_rate\"?'\n"
        "KeyError \"'batch_size'\"\n"
        "KeyError '\\'dept\\'\\nDid you mean \"depth\" instead of \"dept\"?'\n"
        "AttributeError '\\'learning_rte\\'\\nDid you mean \"learning_rate\" instead of \"learning_rte\"?'\n"
        "KeyError \"'zzz'\"\n"
        "AttributeError '\\'modl\\'\\nDid you mean \"model\" instead of \"modl\"?'\n");
  CHECK(printed("print(getattr(cfg, 'batch_size', 32), hasattr(cfg, 'model'), hasattr(cfg, 'batch_size'))\n") ==
        "32 True False\n");
}

TEST_CASE("lock and unlock refuse and allow new fields with the library's errors") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import ConfigDict\n"
                   "cfg = ConfigDict({'learning_rate': 0.1, 'model': {'depth': 2}})\n")
              .ok());
  CHECK(printed("print(cfg.lock() is cfg, cfg.is_locked, cfg.model.is_locked)\n"
                "attempt(lambda: setattr(cfg, 'learning_rat', 0.2))\n"
                "attempt(lambda: cfg.__setitem__('batch', 1))\n"
                "attempt(lambda: setattr(cfg.model, 'width', 1))\n"
                "attempt(lambda: delattr(cfg, 'learning_rate'))\n") ==
        "True True True\n"
        "AttributeError 'Key \"learning_rat\" does not exist and cannot be added since the config is "
        "locked. Other fields present: \"{\\'learning_rate\\': 0.1, \\'model\\': depth: 2\\n}\"\\nDid you mean "
        "\"learning_rate\" instead of \"learning_rat\"?'\n"
        "KeyError 'Key \"batch\" does not exist and cannot be added since the config is locked. Other "
        "fields present: \"{\\'learning_rate\\': 0.1, \\'model\\': depth: 2\\n}\"'\n"
        "AttributeError 'Key \"width\" does not exist and cannot be added since the config is locked. "
        "Other fields present: \"{\\'depth\\': 2}\"'\n"
        "AttributeError 'This ConfigDict is locked, you have to unlock it before trying to delete a "
        "field.'\n");
  CHECK(printed("cfg.learning_rate = 0.3\n"
                "with cfg.unlocked():\n"
                "    cfg.batch = 8\n"
                "    cfg.model.width = 4\n"
                "    print(cfg.is_locked, cfg.model.is_locked)\n"
                "print(cfg.is_locked, cfg.model.is_locked, cfg.batch, cfg.model.width, cfg.learning_rate)\n") ==
        "False False\n"
        "True True 8 4 0.3\n");
  CHECK(printed("print(cfg.unlock() is cfg, cfg.is_locked, cfg.model.is_locked)\n"
                "cfg.new = 1\n"
                "del cfg.new\n"
                "print('new' in cfg)\n") ==
        "True False False\n"
        "False\n");
}

TEST_CASE("update, to_dict, equality and hashing behave as the library's") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import ConfigDict, FieldReference\n"
                   "def make():\n"
                   "    return ConfigDict({'lr': 0.1, 'model': {'depth': 2, 'act': 'relu'}, 'tags': ['a']})\n")
              .ok());
  CHECK(printed("cfg = make()\n"
                "cfg.update({'lr': 1, 'model': {'depth': 4, 'width': 8}}, seed=3)\n"
                "print(cfg.to_dict())\n") ==
        "{'lr': 1.0, 'model': {'act': 'relu', 'depth': 4, 'width': 8}, 'seed': 3, 'tags': ['a']}\n");
  CHECK(printed("attempt(lambda: make().update({}, {}))\n"
                "attempt(lambda: make().update({'lr': 'x'}))\n"
                "attempt(lambda: ConfigDict({'a': FieldReference(1)}).update(ConfigDict({'a': "
                "FieldReference(2)})))\n") ==
        "TypeError update expected at most 1 arguments, got 2\n"
        "TypeError Could not override field 'lr' (reference). x is of original type <class 'str'> and "
        "cannot be casted to type <class 'float'>\n"
        "TypeError Cannot update a FieldReference from another FieldReference: 'a'\n");
  CHECK(printed("print(make() == make(), make() != make(), make() == make().lock(), make() == make().to_dict())\n"
                "other = make()\n"
                "other.model.depth = 3\n"
                "print(make() == other, make().eq_as_configdict(make()))\n") ==
        "True False False False\n"
        "False True\n");
  CHECK(printed("attempt(lambda: hash(make()))\n"
                "attempt(lambda: {make()})\n") ==
        "TypeError unhashable type: 'ConfigDict'\n"
        "TypeError unhashable type: 'ConfigDict'\n");
  CHECK(printed("d = make().to_dict()\n"
                "print(type(d).__name__, type(d['model']).__name__, d)\n") ==
        "dict dict {'lr': 0.1, 'model': {'act': 'relu', 'depth': 2}, 'tags': ['a']}\n");
}

TEST_CASE("deepcopy, copy, pickle and to_yaml round-trip a ConfigDict") {
  REQUIRE(run_cell("import copy\n"
                   "import pickle\n"
                   "import yaml\n"
                   "from ml_collections import ConfigDict\n"
                   "cfg = ConfigDict({'lr': 0.1, 'model': {'depth': 2}, 'tags': ['a']}).lock()\n")
              .ok());
  CHECK(printed("deep = copy.deepcopy(cfg)\n"
                "deep.model.depth = 5\n"
                "print(deep == cfg, cfg.model.depth, deep.is_locked, deep.model.is_locked, "
                "type(deep.model).__name__)\n") == "False 2 True True ConfigDict\n");
  CHECK(printed("shallow = copy.copy(cfg)\n"
                "shallow.model.depth = 7\n"
                "print(shallow == cfg, cfg.model.depth, shallow.model is cfg.model)\n") == "True 7 True\n");
  CHECK(printed("again = pickle.loads(pickle.dumps(cfg))\n"
                "print(again == cfg, again.is_locked, again.model.is_locked, type(again).__module__)\n") ==
        "True True True ml_collections.config_dict.config_dict\n");
  CHECK(printed("print(cfg.to_yaml(), end='')\n") ==
        "!!python/object:ml_collections.config_dict.config_dict.ConfigDict\n"
        "_allow_dotted_keys: false\n"
        "_convert_dict: true\n"
        "_fields:\n"
        "  lr: 0.1\n"
        "  model: !!python/object:ml_collections.config_dict.config_dict.ConfigDict\n"
        "    _allow_dotted_keys: false\n"
        "    _convert_dict: true\n"
        "    _fields:\n"
        "      depth: 7\n"
        "    _locked: true\n"
        "    _sort_keys: true\n"
        "    _type_safe: true\n"
        "  tags:\n"
        "  - a\n"
        "_locked: true\n"
        "_sort_keys: true\n"
        "_type_safe: true\n");
  CHECK(printed("print(yaml.load(cfg.to_yaml(), yaml.UnsafeLoader) == cfg)\n") == "True\n");
}

TEST_CASE("FieldReference links fields and computes arithmetic when read") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import ConfigDict, FieldReference\n"
                   "steps = FieldReference(10)\n"
                   "cfg = ConfigDict({'steps': steps, 'eval_steps': steps, 'half': steps // 2, 'more': 1 + steps * "
                   "3,\n"
                   "                  'nested': {'steps': steps}})\n")
              .ok());
  CHECK(printed("print(cfg.steps, cfg.eval_steps, cfg.half, cfg.more, cfg.nested.steps)\n"
                "cfg.eval_steps = 4\n"
                "print(cfg.steps, cfg.eval_steps, cfg.half, cfg.more, cfg.nested.steps, steps.get())\n") ==
        "10 10 5 31 10\n"
        "4 4 2 13 4 4\n");
  CHECK(printed("print(cfg)\n") ==
        "eval_steps: 4\n"
        "half: 2\n"
        "more: 13\n"
        "nested:\n"
        "  steps: 4\n"
        "steps: 4\n"
        "\n");
  CHECK(printed("print(repr(cfg))\n") ==
        "eval_steps: &id002 !!python/object:ml_collections.config_dict.config_dict.FieldReference\n"
        "  _field_type: &id001 !!python/name:builtins.int ''\n"
        "  _ops: []\n"
        "  _required: false\n"
        "  _value: 4\n"
        "half: !!python/object:ml_collections.config_dict.config_dict.FieldReference\n"
        "  _field_type: *id001\n"
        "  _ops: []\n"
        "  _required: false\n"
        "  _value: 2\n"
        "more: !!python/object:ml_collections.config_dict.config_dict.FieldReference\n"
        "  _field_type: *id001\n"
        "  _ops: []\n"
        "  _required: false\n"
        "  _value: 13\n"
        "nested:\n"
        "  steps: *id002\n"
        "steps: *id002\n"
        "\n");
  CHECK(printed("r = FieldReference(6)\n"
                "print([(r + 1).get(), (r - 1).get(), (r * 2).get(), (r / 4).get(), (r // 4).get(), (r ** "
                "2).get(), (r % 4).get(),\n"
                "       (-r).get(), abs(-r).get(), (2 - r).get(), (3 * r).get(), (12 / r).get(), (13 // "
                "r).get()])\n"
                "print([r.to_float().get(), r.to_str().get(), FieldReference(2.7).to_int().get(), "
                "(FieldReference(1.5) + 1).get()])\n"
                "print([(FieldReference(True) & False).get(), (FieldReference(False) | True).get(), "
                "(FieldReference(True) ^ True).get()])\n"
                "print(FieldReference('abc').attr('upper').get()(), r == 6, r < 7, r >= 6, FieldReference(6) == "
                "r, r.get_type())\n") ==
        "[7, 5, 12, 1.5, 1, 36, 2, -6, 6, -4, 18, 2.0, 2]\n"
        "[6.0, '6', 2, 2.5]\n"
        "[False, True, False]\n"
        "ABC True True True True <class 'int'>\n");
  CHECK(printed("attempt(lambda: bool(r))\n"
                "attempt(lambda: hash(r))\n"
                "attempt(lambda: FieldReference(None))\n"
                "attempt(lambda: FieldReference(1, field_type=3))\n"
                "attempt(lambda: FieldReference(1, field_type=str))\n"
                "attempt(lambda: FieldReference(1).set(FieldReference('a')))\n"
                "attempt(lambda: r.set(r + 1))\n"
                "attempt(lambda: setattr(cfg, 'steps', 2.5))\n") ==
        "NotImplementedError FieldReference cannot be used for control flow. For boolean operations use "
        "\"&\" (logical \"and\") or \"|\" (logical \"or\").\n"
        "TypeError unhashable type: 'FieldReference'\n"
        "ValueError Default value cannot be None if field_type is None\n"
        "TypeError field_type should be a type, not <class 'int'>\n"
        "TypeError 1 is of original type <class 'int'> and cannot be casted to type <class 'str'>\n"
        "TypeError Reference is of type <class 'str'> but should be of type <class 'int'>\n"
        "MutabilityError Found cycle in reference graph.\n"
        "TypeError Could not override field 'steps' (reference). 2.5 is of original type <class 'float'> "
        "and cannot be casted to type <class 'int'>\n");
  CHECK(printed("total = FieldReference(0.5, field_type=float)\n"
                "total.set(2)\n"
                "print(total.get(), total.empty(), FieldReference(None, field_type=int).empty(), "
                "(FieldReference(None, field_type=int) + 1).get())\n") == "2.0 False True None\n");
}

TEST_CASE("get_ref and get_oneway_ref tie a derived field to another") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import ConfigDict\n"
                   "cfg = ConfigDict({'batch_size': 32, 'lr': 0.1, 'none': None})\n")
              .ok());
  CHECK(printed("cfg.eval_batch_size = cfg.get_ref('batch_size') * 2\n"
                "cfg.lr_copy = cfg.get_oneway_ref('lr')\n"
                "cfg.batch_size = 64\n"
                "cfg.lr = 0.5\n"
                "print(cfg.eval_batch_size, cfg.lr_copy)\n"
                "cfg.lr_copy = 0.7\n"
                "print(cfg.lr, cfg.lr_copy, cfg.get_ref('batch_size') is cfg.get_ref('batch_size'))\n"
                "print(cfg.get_type('batch_size'), cfg.get_type('eval_batch_size'), cfg.get_type('lr'))\n") ==
        "128 0.5\n"
        "0.5 0.7 True\n"
        "<class 'int'> <class 'int'> <class 'float'>\n");
  CHECK(printed("attempt(lambda: cfg.get_ref('none'))\n"
                "attempt(lambda: cfg.get_ref('missing'))\n") ==
        "ValueError Cannot create reference to a field whose value is None\n"
        "KeyError 'missing'\n");
  CHECK(printed("print(cfg)\n") ==
        "batch_size: 64\n"
        "eval_batch_size: 128\n"
        "lr: 0.5\n"
        "lr_copy: 0.7\n"
        "none: null\n"
        "\n");
}

TEST_CASE("placeholder and required_placeholder wait for a value") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import config_dict\n"
                   "cfg = config_dict.ConfigDict({'batch_size': config_dict.placeholder(int),\n"
                   "                              'dataset': config_dict.required_placeholder(str)})\n")
              .ok());
  CHECK(printed("print(cfg.batch_size, cfg.get_type('batch_size'))\n"
                "attempt(lambda: cfg.dataset)\n"
                "attempt(lambda: str(cfg))\n"
                "attempt(lambda: setattr(cfg, 'batch_size', 'big'))\n") ==
        "None <class 'int'>\n"
        "RequiredValueError None value found in required reference\n"
        "RequiredValueError None value found in required reference\n"
        "TypeError Could not override field 'batch_size' (reference). big is of original type <class "
        "'str'> and cannot be casted to type <class 'int'>\n");
  CHECK(printed("cfg.batch_size = 128\n"
                "cfg.dataset = 'imagenet'\n"
                "print(cfg.batch_size, cfg.dataset)\n"
                "print(cfg)\n"
                "print(repr(cfg))\n") ==
        "128 imagenet\n"
        "batch_size: 128\n"
        "dataset: imagenet\n"
        "\n"
        "batch_size: !!python/object:ml_collections.config_dict.config_dict.FieldReference\n"
        "  _field_type: !!python/name:builtins.int ''\n"
        "  _ops: []\n"
        "  _required: false\n"
        "  _value: 128\n"
        "dataset: !!python/object:ml_collections.config_dict.config_dict.FieldReference\n"
        "  _field_type: !!python/name:builtins.str ''\n"
        "  _ops: []\n"
        "  _required: false\n"
        "  _value: imagenet\n"
        "\n");
  CHECK(printed("print(config_dict.RequiredValueError.__mro__[1].__name__, config_dict.MutabilityError.__name__)\n") ==
        "Exception MutabilityError\n");
}

TEST_CASE("copy_and_resolve_references returns a copy holding plain values") {
  REQUIRE(run_cell("from ml_collections import ConfigDict, FieldReference\n"
                   "ref = FieldReference(3)\n"
                   "cfg = ConfigDict({'a': ref, 'b': ref * 2, 'n': {'c': ref}}).lock()\n")
              .ok());
  CHECK(printed("plain = cfg.copy_and_resolve_references()\n"
                "ref.set(10)\n"
                "print(cfg.a, cfg.b, cfg.n.c, plain.a, plain.b, plain.n.c, plain.is_locked, plain.n is cfg.n)\n"
                "print(type(plain._fields['a']).__name__, repr(plain))\n") ==
        "10 20 10 3 6 3 True False\n"
        "int a: 3\n"
        "b: 6\n"
        "n:\n"
        "  c: 3\n"
        "\n");
}

TEST_CASE("FrozenConfigDict is immutable and hashable and holds tuples for lists") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("import copy\n"
                   "import pickle\n"
                   "import ml_collections\n"
                   "frozen = ml_collections.FrozenConfigDict({'sizes': [1, 2, [3]], 'ids': {4, 5}, 'model': "
                   "{'dims': [8, 8]},\n"
                   "                                          'pair': (1, [2]), 'name': 'x'})\n")
              .ok());
  CHECK(printed("print(frozen.sizes, frozen.ids, frozen.model.dims, frozen.pair, type(frozen.model).__name__)\n") ==
        "(1, 2, (3,)) frozenset({4, 5}) (8, 8) (1, (2,)) FrozenConfigDict\n");
  CHECK(printed("print(frozen)\n") ==
        "ids: !!python/object/apply:builtins.frozenset\n"
        "- - 4\n"
        "  - 5\n"
        "model:\n"
        "  dims: !!python/tuple\n"
        "  - 8\n"
        "  - 8\n"
        "name: x\n"
        "pair: !!python/tuple\n"
        "- 1\n"
        "- !!python/tuple\n"
        "  - 2\n"
        "sizes: !!python/tuple\n"
        "- 1\n"
        "- 2\n"
        "- !!python/tuple\n"
        "  - 3\n"
        "\n");
  CHECK(printed("attempt(lambda: setattr(frozen, 'name', 'y'))\n"
                "attempt(lambda: frozen.__setitem__('name', 'y'))\n"
                "attempt(lambda: delattr(frozen, 'name'))\n"
                "attempt(lambda: frozen.__delitem__('name'))\n"
                "attempt(lambda: frozen.lock())\n"
                "attempt(lambda: frozen.unlock())\n"
                "attempt(lambda: frozen.model.__setattr__('dims', 1))\n") ==
        "AttributeError FrozenConfigDict is immutable. Cannot call __setattr__().\n"
        "AttributeError FrozenConfigDict is immutable. Cannot call __setitem__().\n"
        "AttributeError FrozenConfigDict is immutable. Cannot call __delattr__().\n"
        "AttributeError FrozenConfigDict is immutable. Cannot call __delitem__().\n"
        "AttributeError FrozenConfigDict is immutable. Cannot call lock().\n"
        "AttributeError FrozenConfigDict is immutable. Cannot call unlock().\n"
        "AttributeError FrozenConfigDict is immutable. Cannot call __setattr__().\n");
  CHECK(printed("twin = ml_collections.FrozenConfigDict({'sizes': [1, 2, [3]], 'ids': {4, 5}, 'model': {'dims': "
                "[8, 8]},\n"
                "                                        'pair': (1, [2]), 'name': 'x'})\n"
                "print(hash(frozen) == hash(twin), frozen == twin, len({frozen, twin}))\n"
                "print(ml_collections.FrozenConfigDict({'a': [1]}) == ml_collections.FrozenConfigDict({'a': "
                "(1,)}),\n"
                "      hash(ml_collections.FrozenConfigDict({'a': [1]})) == "
                "hash(ml_collections.FrozenConfigDict({'a': (1,)})))\n"
                "print(frozen == ml_collections.ConfigDict(frozen), "
                "frozen.eq_as_configdict(ml_collections.ConfigDict(frozen)))\n") ==
        "True True 1\n"
        "False False\n"
        "False True\n");
  CHECK(printed("thawed = ml_collections.ConfigDict(frozen)\n"
                "thawed.name = 'y'\n"
                "print(type(thawed.model).__name__, thawed.sizes, thawed.ids, frozen.name, "
                "type(frozen.as_configdict()).__name__)\n"
                "print(ml_collections.FrozenConfigDict(ml_collections.ConfigDict({'n': {'a': "
                "1}}).lock()).is_locked)\n") ==
        "ConfigDict [1, 2, [3]] {4, 5} x ConfigDict\n"
        "True\n");
  CHECK(printed("attempt(lambda: hash(ml_collections.FrozenConfigDict({'a': bytearray(b'x')})))\n"
                "attempt(lambda: ml_collections.FrozenConfigDict({'a': [{'b': 1}]}))\n"
                "loop = ml_collections.ConfigDict()\n"
                "loop.me = loop\n"
                "attempt(lambda: ml_collections.FrozenConfigDict(loop))\n") ==
        "TypeError FrozenConfigDict contains unhashable type <class 'bytearray'>\n"
        "ValueError Bad FrozenConfigDict initialization: Cannot contain a dict, ConfigDict, or "
        "FieldReference within a list or tuple.\n"
        "ValueError Bad FrozenConfigDict initialization: Cannot contain a cycle in its reference "
        "structure.\n");
  CHECK(printed("print(copy.deepcopy(frozen) == frozen, pickle.loads(pickle.dumps(frozen)) == frozen,\n"
                "      type(frozen.copy_and_resolve_references()).__name__)\n"
                "ref = ml_collections.FieldReference(1)\n"
                "print(ml_collections.FrozenConfigDict({'a': ref, 'b': ref + 1}).to_dict())\n") ==
        "True True FrozenConfigDict\n"
        "{'a': 1, 'b': 2}\n");
}

TEST_CASE("create, to_json, update_from_flattened_dict and recursive_rename") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("from ml_collections import config_dict\n").ok());
  CHECK(printed("point = config_dict.create(x=1, y=config_dict.create(z='a'))\n"
                "print(type(point).__name__, type(point.y).__name__, point.x, point.y.z)\n"
                "print(point)\n") ==
        "ConfigDict ConfigDict 1 a\n"
        "x: 1\n"
        "y:\n"
        "  z: a\n"
        "\n");
  CHECK(printed("ref = config_dict.FieldReference(2)\n"
                "cfg = config_dict.ConfigDict({'b': [1, (2, 3)], 'a': {'r': ref, 's': ref * 2}, 'c': None, 't': "
                "int})\n"
                "print(cfg.to_json())\n"
                "print(cfg.to_json(indent=1, sort_keys=True))\n"
                "attempt(lambda: config_dict.ConfigDict({'s': {1, 2}}).to_json())\n"
                "print(config_dict.ConfigDict({'s': {3, 1}, 'f': len, 'c': "
                "config_dict.ConfigDict}).to_json_best_effort())\n") ==
        "{\"b\": [1, [2, 3]], \"a\": {\"r\": 2, \"s\": 4}, \"c\": null, \"t\": \"<class 'int'>\"}\n"
        "{\n"
        " \"a\": {\n"
        "  \"r\": 2,\n"
        "  \"s\": 4\n"
        " },\n"
        " \"b\": [\n"
        "  1,\n"
        "  [\n"
        "   2,\n"
        "   3\n"
        "  ]\n"
        " ],\n"
        " \"c\": null,\n"
        " \"t\": \"<class 'int'>\"\n"
        "}\n"
        "TypeError <class 'set'> is not JSON serializable. Instead use ConfigDict.to_json_best_effort()\n"
        "{\"s\": [1, 3], \"f\": \"unserializable object: <built-in function len>\", \"c\": \"<class "
        "'ml_collections.config_dict.config_dict.ConfigDict'>\"}\n");
  CHECK(printed("cfg = config_dict.ConfigDict({'a': 1, 'b': {'c': {'d': 2}}, 'l': [1, 2], 't': (1, 2)})\n"
                "cfg.update_from_flattened_dict({'a': 2, 'b.c.d': 3, 'b.c.e': 4, 'l[1]': 5, 't[0]': 6})\n"
                "print(cfg.to_dict())\n"
                "cfg.b.update_from_flattened_dict({'config.b.c.d': 7, 'other': 1}, 'config.b.')\n"
                "print(cfg.b.c.d)\n"
                "attempt(lambda: cfg.update_from_flattened_dict({'x.y': 1}))\n"
                "attempt(lambda: cfg.update_from_flattened_dict({'a.y': 1}))\n"
                "attempt(lambda: cfg.update_from_flattened_dict({'a[0]': 1}))\n") ==
        "{'a': 2, 'b': {'c': {'d': 3, 'e': 4}}, 'l': [1, 5], 't': (6, 2)}\n"
        "7\n"
        "KeyError 'Key \"x.y\" cannot be set as \"x\" was not found.'\n"
        "KeyError 'Key \"a.y\" cannot be updated as \"a\" is not a ConfigDict (<class \\'int\\'>).'\n"
        "KeyError 'Key \"a[0]\" cannot be set as \"a\" is not a tuple/list.'\n");
  CHECK(printed("print(config_dict.recursive_rename(config_dict.ConfigDict({'lr': 1, 'opt': {'lr': 2, 'm': "
                "0.9}}), 'lr', 'rate'))\n") ==
        "opt:\n"
        "  m: 0.9\n"
        "  rate: 2\n"
        "rate: 1\n"
        "\n");
}
TEST_CASE("a ConfigDict as a cell's value shows its repr and its errors read as the library's tracebacks") {
  REQUIRE(run_cell("import ml_collections\nsettings = ml_collections.ConfigDict({'learning_rate': 0.1, 'depth': 2})\n")
              .ok());
  const CellResult shown = run_cell("settings");
  REQUIRE(shown.ok());
  REQUIRE(shown.output.has_value());
  CHECK(*shown.output == "depth: 2\nlearning_rate: 0.1\n");
  const CellResult typo = run_cell("settings.learning_rat");
  CHECK(typo.error.find("AttributeError: '\\'learning_rat\\'\\nDid you mean \"learning_rate\" instead of "
                        "\"learning_rat\"?'. Did you mean: 'learning_rate'?") != std::string::npos);
  const CellResult retyped = run_cell("settings.depth = 'deep'");
  CHECK(retyped.error.find("TypeError: Could not override field 'depth' (reference). deep is of original type "
                           "<class 'str'> and cannot be casted to type <class 'int'>") != std::string::npos);
}

TEST_CASE("the package's modules and names are where the library has them") {
  REQUIRE(run_cell(python_test::kAttemptHelper).ok());
  REQUIRE(run_cell("import ml_collections\nfrom ml_collections import config_dict\n").ok());
  CHECK(printed("print(ml_collections.__version__, ml_collections.__all__)\n"
                "print(config_dict.__all__)\n"
                "print(ml_collections.config_dict.ConfigDict is ml_collections.ConfigDict,"
                " config_dict.FrozenConfigDict is ml_collections.FrozenConfigDict,"
                " config_dict.FieldReference is ml_collections.FieldReference)\n"
                "print(ml_collections.ConfigDict, config_dict.RequiredValueError, config_dict._Op(len, [1]))\n") ==
        "1.1.0 ('ConfigDict', 'FieldReference', 'FrozenConfigDict')\n"
        "('_Op', 'ConfigDict', 'create', 'CustomJSONEncoder', 'FieldReference', 'FrozenConfigDict', "
        "'JSONDecodeError', 'MutabilityError', 'placeholder', 'recursive_rename', 'required_placeholder', "
        "'RequiredValueError')\n"
        "True True True\n"
        "<class 'ml_collections.config_dict.config_dict.ConfigDict'> "
        "<class 'ml_collections.config_dict.config_dict.RequiredValueError'> "
        "_Op(fn=<built-in function len>, args=[1])\n");
  // absl's command-line flags for configs are not simulated: NotImplementedError, on access and on import.
  CHECK(printed("import importlib\n"
                "attempt(lambda: ml_collections.config_flags)\n"
                "attempt(lambda: importlib.import_module('ml_collections.config_flags'))\n"
                "attempt(lambda: exec('from ml_collections import config_flags'))\n"
                "attempt(lambda: exec('from ml_collections.config_flags import DEFINE_config_file'))\n"
                "attempt(lambda: ml_collections.no_such_name)\n") ==
        "NotImplementedError ml_collections.config_flags is not supported by shardscope\n"
        "NotImplementedError ml_collections.config_flags is not supported by shardscope\n"
        "NotImplementedError ml_collections.config_flags is not supported by shardscope\n"
        "NotImplementedError ml_collections.config_flags is not supported by shardscope\n"
        "AttributeError module 'ml_collections' has no attribute 'no_such_name'\n");
}

TEST_CASE("a tutorial's config holds JAX dtypes and prints them by their jax.numpy names") {
  REQUIRE(run_cell("import jax.numpy as jnp\nimport ml_collections\n"
                   "config = ml_collections.ConfigDict()\n"
                   "config.model = ml_collections.ConfigDict({'num_layers': 4, 'dtype': jnp.bfloat16})\n"
                   "config.optimizer = dict(name='adamw', learning_rate=3e-4, b1=0.9)\n"
                   "config.param_dtype = jnp.float32\n")
              .ok());
  CHECK(printed("print(config)\n") ==
        "model:\n"
        "  dtype: !!python/name:jax.numpy.bfloat16 ''\n"
        "  num_layers: 4\n"
        "optimizer:\n"
        "  b1: 0.9\n"
        "  learning_rate: 0.0003\n"
        "  name: adamw\n"
        "param_dtype: !!python/name:jax.numpy.float32 ''\n"
        "\n");
  CHECK(printed("config.model.dtype = jnp.float16\n"
                "print(config.model.dtype is jnp.float16, jnp.ones(2, dtype=config.model.dtype).dtype,"
                " type(config.optimizer).__name__, config.optimizer.learning_rate * 2)\n") ==
        "True float16 ConfigDict 0.0006\n");
}
