// Tells core where user code is: the innermost Python frame outside the simulated packages, as JAX's
// source_info_util.user_frame finds it, so traced equations carry file, line, column and function.
#include <Python.h>
#include <frameobject.h>

#include <cstring>
#include <string>

#include "ir/source_info.h"
#include "python/bindings.h"

namespace shardscope::python {
namespace {

// Modules compiled into the binary are named "<shardscope jax...>" and "<shardscope-host:...>".
bool is_internal(const char* file_name) { return std::strncmp(file_name, "<shardscope", 11) == 0; }

// The last location handed out, reused while user code stays on the same instruction (a jnp call that binds
// several primitives asks once per primitive).
struct LastCapture {
  const void* code = nullptr;
  int instruction = -1;
  SourceInfo info;
};
thread_local LastCapture last_capture;

SourceInfo user_location(PyFrameObject* frame, PyCodeObject* code) {
#if PY_VERSION_HEX >= 0x030B0000
  const int instruction = PyFrame_GetLasti(frame);
  if (last_capture.code == code && last_capture.instruction == instruction && last_capture.info) {
    return last_capture.info;
  }
  int start_line = 0;
  int start_column = 0;
  int end_line = 0;
  int end_column = 0;
  if (PyCode_Addr2Location(code, instruction, &start_line, &start_column, &end_line, &end_column) == 0) {
    start_line = PyFrame_GetLineNumber(frame);
    start_column = 0;
  }
  PyObject* qualname = code->co_qualname;
#else
  const int instruction = -1;
  const int start_line = PyFrame_GetLineNumber(frame);
  const int start_column = 0;
  PyObject* qualname = code->co_name;
#endif
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const char* function = qualname != nullptr ? PyUnicode_AsUTF8(qualname) : nullptr;
  if (file == nullptr || function == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  auto info = std::make_shared<const SourceLocation>(SourceLocation{file, start_line, start_column, function});
  last_capture = {code, instruction, info};
  return info;
}

SourceInfo capture_python_location() {
  if (PyGILState_Check() == 0) return nullptr;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  SourceInfo found;
  while (frame != nullptr && !found) {
    PyCodeObject* code = PyFrame_GetCode(frame);  // new reference
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    if (file == nullptr) {
      PyErr_Clear();
    } else if (!is_internal(file)) {
      found = user_location(frame, code);
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);  // new reference
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  return found;
}

}  // namespace

void install_source_capture() { set_source_capture(&capture_python_location); }

}  // namespace shardscope::python
