# The window's side of a Jupyter connection: runs cells in a kernel over the Jupyter protocol (jupyter_client),
# and installs the inspection module in that kernel, by its source, so snapshots use public JAX APIs only.
import ast
import queue
import re

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class KernelLink:
    """A kernel the window attached to (`connection_file`) or started (`kernel_name`, from its kernelspec)."""

    def __init__(self, connection_file, kernel_name, inspect_source, timeout=60):
        import jupyter_client
        self.manager = None
        if kernel_name:
            self.manager = jupyter_client.KernelManager(kernel_name=kernel_name)
            self.manager.start_kernel()
            self.client = self.manager.client()
        else:
            self.client = jupyter_client.BlockingKernelClient(connection_file=connection_file)
            self.client.load_connection_file()
        self.client.start_channels()
        try:
            self.client.wait_for_ready(timeout=timeout)
        except RuntimeError as error:
            self.close()
            where = kernel_name or connection_file
            raise RuntimeError("the kernel %s did not answer within %d s: %s" % (where, timeout, error)) from None
        self.interrupt_sent = False
        # Installed once per kernel: a second window attaching later reuses it (and its recorder, which
        # already wraps jax.jit) instead of wrapping jax.jit again.
        setup = ("import sys as _ss_sys, types as _ss_types\n"
                 "if '_shardscope_inspect' not in _ss_sys.modules:\n"
                 "    _ss_module = _ss_types.ModuleType('_shardscope_inspect')\n"
                 "    exec(compile(%r, '<shardscope inspection>', 'exec'), _ss_module.__dict__)\n"
                 "    _ss_sys.modules['_shardscope_inspect'] = _ss_module\n"
                 "    del _ss_module\n"
                 "_ss_sys.modules['_shardscope_inspect'].attach(globals())\n"
                 "del _ss_sys, _ss_types\n") % inspect_source
        reply = self._request(setup, silent=True)
        if reply["content"]["status"] != "ok":
            raise RuntimeError("could not install the inspection module in the kernel: %s: %s" % (
                reply["content"].get("ename"), reply["content"].get("evalue")))

    def _request(self, code, silent=False, user_expressions=None, interrupted=lambda: False):
        """Sends an execute request; returns its reply and the outputs it produced, in order."""
        # stop_on_error=False: each request is the user's own cell; with Jupyter's default, a request arriving
        # while the kernel still handles the previous cell's error would be aborted unrun.
        msg_id = self.client.execute(code, silent=silent, store_history=not silent, stop_on_error=False,
                                     user_expressions=user_expressions or {}, allow_stdin=False)
        self.outputs = []
        idle = False
        while not idle:
            if interrupted() and not self.interrupt_sent:
                self.interrupt()
            try:
                message = self.client.get_iopub_msg(timeout=0.1)
            except queue.Empty:
                if not self.client.is_alive():
                    raise RuntimeError("the kernel died or its connection was lost") from None
                continue
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                self.outputs.append((content["name"], content["text"]))
            elif kind in ("execute_result", "display_data"):
                text = content.get("data", {}).get("text/plain")
                if text is not None:
                    self.outputs.append(("value", text + "\n"))
            elif kind == "error":
                self.outputs.append(("error", _ANSI.sub("", "\n".join(content["traceback"])) + "\n"))
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
        while True:
            reply = self.client.get_shell_msg(timeout=30)
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return reply

    def execute(self, code, interrupted):
        """Runs a cell: (status, [(kind, text)...]) with status ok, error or interrupted."""
        self.interrupt_sent = False
        reply = self._request(code, interrupted=interrupted)
        content = reply["content"]
        status = content["status"]
        if status == "error" and content.get("ename") == "KeyboardInterrupt":
            status = "interrupted"
        elif status == "aborted":
            status = "interrupted"
        return status, self.outputs

    def snapshot(self):
        """The inspection module's JSON for the kernel's namespace."""
        expression = "__import__('_shardscope_inspect').snapshot(globals())"
        reply = self._request("", silent=True, user_expressions={"snapshot": expression})
        result = reply["content"].get("user_expressions", {}).get("snapshot", {})
        if result.get("status") != "ok":
            raise RuntimeError("snapshot failed: %s: %s" % (result.get("ename"), result.get("evalue")))
        return ast.literal_eval(result["data"]["text/plain"])

    def complete(self, text):
        msg_id = self.client.complete(text, len(text))
        try:
            while True:
                reply = self.client.get_shell_msg(timeout=2)
                if reply.get("parent_header", {}).get("msg_id") == msg_id:
                    break
        except queue.Empty:
            return []
        content = reply["content"]
        start = content.get("cursor_start", len(text))
        return [text[:start] + match for match in content.get("matches", [])]

    def interrupt(self):
        """As Jupyter's interrupt: a signal through the manager that started the kernel, else an
        interrupt_request on the control channel (ipykernel answers it with SIGINT to itself)."""
        self.interrupt_sent = True
        if self.manager is not None:
            self.manager.interrupt_kernel()
        else:
            self.client.control_channel.send(self.client.session.msg("interrupt_request", {}))

    def close(self):
        try:
            self.client.stop_channels()
        finally:
            if self.manager is not None:
                self.manager.shutdown_kernel(now=True)
