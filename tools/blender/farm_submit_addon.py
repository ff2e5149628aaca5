# Submit from Blender: render the open .blend on a farm service (docs/service.md, issue 40).
#
# A panel in Properties > Render > Render Farm, and two operators:
#   render.farm_submit  runs `farm submit <blend> -o OUT --frame N --priority P [--server EP] --json`
#                       (a subprocess, no shell), reports the job's id, then follows the job with
#                       `farm job ID --json` (a thread and an app timer) in the panel and the status
#                       bar. With wait=True (what `blender -b` scripts use) it blocks until the job
#                       ends, fetches its image to OUT and returns FINISHED, or CANCELLED with the
#                       reason.
#   render.farm_fetch   writes the image of the scene's last job (done) to OUT with `farm fetch`.
# The farm renders the .blend on disk, so unsaved changes are refused unless "Save Before
# Submitting" is on. Errors of the farm (its exit code and stderr) are reported as errors.
# Tested by tools/blender/check_farm_addon.py.

bl_info = {
    "name": "Render Farm Submit",
    "author": "farm",
    "version": (0, 1, 0),
    "blender": (3, 0, 0),
    "location": "Properties > Render > Render Farm",
    "description": "Submit the open .blend to a farm service, follow its progress, fetch its image",
    "category": "Render",
}

import json
import os
import shutil
import subprocess
import threading
import time

import bpy
from bpy.props import BoolProperty, FloatProperty, IntProperty, PointerProperty, StringProperty

_TERMINAL = {"done", "failed", "cancelled"}
_POLL_SECONDS = 1.0


# ---------------------------------------------------------------------------------------------
# Running the farm client


class FarmError(Exception):
    pass


def _farm_binary(settings):
    path = settings.farm_path.strip() or "farm"
    if os.sep in path or path.startswith("//"):
        path = bpy.path.abspath(path)
        if not os.path.isfile(path):
            raise FarmError("farm binary '%s' is not there (set Farm Binary in the Render Farm panel)" % path)
        return path
    found = shutil.which(path)
    if not found:
        raise FarmError("farm binary '%s' is not on PATH (set Farm Binary in the Render Farm panel)" % path)
    return found


def _client_options(server, timeout):
    args = []
    if server:
        args += ["--server", server]
    if timeout > 0:
        args += ["--timeout", "%g" % timeout]
    return args


def _run_farm(args, timeout=None):
    """Runs the farm client; returns its stdout, raises FarmError naming its reason."""
    try:
        done = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=timeout)
    except FileNotFoundError:
        raise FarmError("cannot run '%s'" % args[0])
    except subprocess.TimeoutExpired:
        raise FarmError("'%s %s' gave no answer within %g s" % (os.path.basename(args[0]), args[1], timeout))
    if done.returncode != 0:
        lines = [l.strip() for l in done.stderr.splitlines() if l.strip()]
        errors = [l for l in lines if l.startswith("error:")]
        reason = "; ".join(l[len("error:"):].strip() for l in errors) if errors else " ".join(lines[-3:])
        what = "refused" if done.returncode == 2 else "failed (exit %d)" % done.returncode
        raise FarmError("farm %s %s: %s" % (args[1], what, reason or "no message"))
    return done.stdout


def _first_json(stdout):
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise FarmError("the farm printed no JSON: %r" % stdout[:200])


def _query_job(farm, job_id, server, timeout):
    out = _run_farm([farm, "job", str(job_id), "--json"] + _client_options(server, timeout),
                    timeout=(timeout if timeout > 0 else 30) + 30)
    return _first_json(out)


def _fetch_job(farm, job_id, output, server, timeout):
    folder = os.path.dirname(output)
    if folder:
        os.makedirs(folder, exist_ok=True)
    _run_farm([farm, "fetch", str(job_id), "-o", output] + _client_options(server, timeout))


# ---------------------------------------------------------------------------------------------
# Following a job without blocking the UI: a thread runs `farm job`, an app timer shows it.


class _Watch:
    def __init__(self, scene_name, farm, job_id, server, timeout):
        self.scene_name, self.farm, self.job_id = scene_name, farm, job_id
        self.server, self.timeout = server, timeout
        self.lock = threading.Lock()
        self.latest = None  # the job's JSON
        self.error = ""
        self.finished = False
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            try:
                job = _query_job(self.farm, self.job_id, self.server, self.timeout)
                with self.lock:
                    self.latest, self.error = job, ""
                if job.get("state") in _TERMINAL:
                    break
            except (FarmError, ValueError) as e:
                with self.lock:
                    self.error = str(e)
                if "refused" in self.error:  # e.g. the job is no longer known: stop asking
                    break
            self.stop.wait(_POLL_SECONDS)
        with self.lock:
            self.finished = True


_watches = {}  # scene name -> _Watch


def _apply(settings, job):
    settings.job_state = job.get("state", "")
    settings.job_progress = float(job.get("progress") or 0.0)
    settings.job_workers = int(job.get("workers") or 0)
    settings.job_reason = job.get("reason") or ""


def _redraw():
    wm = bpy.context.window_manager
    if wm is None:
        return
    for window in wm.windows:
        for area in window.screen.areas:
            if area.type in {"PROPERTIES", "STATUSBAR"}:
                area.tag_redraw()


def _timer():
    for name, watch in list(_watches.items()):
        scene = bpy.data.scenes.get(name)
        with watch.lock:
            job, error, finished = watch.latest, watch.error, watch.finished
        if scene is None or scene.farm_submit.job_id != watch.job_id:
            watch.stop.set()
            del _watches[name]
            continue
        settings = scene.farm_submit
        if job is not None:
            _apply(settings, job)
        settings.job_error = error
        if finished:
            del _watches[name]
            if job is not None and job.get("state") in _TERMINAL:
                print("farm: job %d is %s%s" % (watch.job_id, job["state"],
                                                 ": " + job["reason"] if job.get("reason") else ""))
    _redraw()
    return _POLL_SECONDS / 2 if _watches else None


def _follow(scene, farm, job_id, server, timeout):
    old = _watches.pop(scene.name, None)
    if old:
        old.stop.set()
    _watches[scene.name] = _Watch(scene.name, farm, job_id, server, timeout)
    if not bpy.app.timers.is_registered(_timer):
        bpy.app.timers.register(_timer, first_interval=0.2)


# ---------------------------------------------------------------------------------------------
# Properties


class FarmSubmitSettings(bpy.types.PropertyGroup):
    farm_path: StringProperty(name="Farm Binary", default="farm", subtype="FILE_PATH",
                              description="The farm client: a name found on PATH, or a path")
    server: StringProperty(name="Server", default="",
                           description="The farm service's endpoint, e.g. tcp://farm:5555 "
                                       "(empty: $FARM_SERVER, else tcp://127.0.0.1:5555)")
    priority: IntProperty(name="Priority", default=0, min=-1000, max=1000,
                          description="Higher runs first; equal priorities share the workers")
    use_current_frame: BoolProperty(name="Current Frame", default=True,
                                    description="Render the scene's current frame, else the frame below")
    frame: IntProperty(name="Frame", default=1, description="The frame to render (a frame number of the scene's range)")
    output: StringProperty(name="Output", default="//farm_render.png", subtype="FILE_PATH",
                           description="Where the image is written (.png .tga .ppm: 8-bit, .exr: float); "
                                       "its file name is also the name the service keeps")
    job_name: StringProperty(name="Job Name", default="", description="Shown in `farm jobs` (empty: the file's name)")
    save_first: BoolProperty(name="Save Before Submitting", default=False,
                             description="Save the .blend if it has unsaved changes (else they are refused)")
    timeout: FloatProperty(name="Timeout", default=30.0, min=0.1, max=3600.0, unit="TIME_ABSOLUTE",
                           description="Seconds to wait for each answer of the service")
    # The last job submitted from this scene
    job_id: IntProperty(name="Job", default=0)
    job_server: StringProperty(default="")
    job_output: StringProperty(default="", subtype="FILE_PATH")
    job_state: StringProperty(default="")
    job_progress: FloatProperty(name="Progress", default=0.0, min=0.0, max=1.0, subtype="FACTOR")
    job_workers: IntProperty(default=0)
    job_reason: StringProperty(default="")
    job_error: StringProperty(default="")


def _farm_frame(scene, settings):
    """The farm's --frame: the N-th frame of the .blend's range, from 1."""
    frame = scene.frame_current if settings.use_current_frame else settings.frame
    start, end, step = scene.frame_start, scene.frame_end, max(1, scene.frame_step)
    if frame < start or frame > end or (frame - start) % step:
        raise FarmError("frame %d is not one the scene renders (%d..%d step %d)" % (frame, start, end, step))
    return (frame - start) // step + 1, frame


# ---------------------------------------------------------------------------------------------
# Operators


class RENDER_OT_farm_submit(bpy.types.Operator):
    """Submit the saved .blend to the farm service and follow its progress"""
    bl_idname = "render.farm_submit"
    bl_label = "Submit to Farm"

    wait: BoolProperty(name="Wait", default=False, options={"SKIP_SAVE"},
                       description="Block until the job ends, then fetch its image to the output path")

    def _fail(self, message):
        self.report({"ERROR"}, message)
        return {"CANCELLED"}

    def execute(self, context):
        scene = context.scene
        settings = scene.farm_submit
        if not bpy.data.is_saved or not bpy.data.filepath:
            return self._fail("Farm: save the .blend first (the farm renders the file on disk)")
        if bpy.data.is_dirty:
            if not settings.save_first:
                return self._fail("Farm: the .blend has unsaved changes and the farm renders the file on "
                                  "disk: save it, or turn on Save Before Submitting")
            bpy.ops.wm.save_mainfile()
        try:
            farm = _farm_binary(settings)
            farm_frame, frame = _farm_frame(scene, settings)
            if not settings.output.strip():
                raise FarmError("set an Output path")
            output = os.path.abspath(bpy.path.abspath(settings.output))
            os.makedirs(os.path.dirname(output), exist_ok=True)  # the farm refuses a missing folder
            server = settings.server.strip()
            args = [farm, "submit", bpy.data.filepath, "-o", output, "--frame", str(farm_frame),
                    "--priority", str(settings.priority), "--json"] + _client_options(server, settings.timeout)
            if settings.job_name.strip():
                args += ["--name", settings.job_name.strip()]
            job_id = int(_first_json(_run_farm(args))["id"])
        except (FarmError, ValueError, KeyError) as e:
            return self._fail("Farm: %s" % e)

        settings.job_id, settings.job_server, settings.job_output = job_id, server, output
        settings.job_state, settings.job_progress, settings.job_reason, settings.job_error = "queued", 0.0, "", ""
        self.report({"INFO"}, "Farm: submitted job %d (frame %d, priority %d)" % (job_id, frame, settings.priority))

        if not self.wait:
            _follow(scene, farm, job_id, server, settings.timeout)
            return {"FINISHED"}

        # Block until the job ends (for `blender -b`): poll, then fetch.
        shown = None
        while True:
            try:
                job = _query_job(farm, job_id, server, settings.timeout)
            except (FarmError, ValueError) as e:
                settings.job_error = str(e)
                return self._fail("Farm: job %d: %s" % (job_id, e))
            _apply(settings, job)
            line = "%s %3.0f%%" % (settings.job_state, 100 * settings.job_progress)
            if line != shown:
                print("farm: job %d %s" % (job_id, line), flush=True)
                shown = line
            if settings.job_state in _TERMINAL:
                break
            time.sleep(0.5)
        if settings.job_state != "done":
            return self._fail("Farm: job %d %s: %s" % (job_id, settings.job_state, settings.job_reason or "no reason given"))
        try:
            _fetch_job(farm, job_id, output, server, settings.timeout)
        except FarmError as e:
            return self._fail("Farm: %s" % e)
        self.report({"INFO"}, "Farm: job %d done, wrote %s" % (job_id, output))
        return {"FINISHED"}


class RENDER_OT_farm_fetch(bpy.types.Operator):
    """Write the image of the scene's last farm job (once done) to the output path"""
    bl_idname = "render.farm_fetch"
    bl_label = "Fetch Image"

    filepath: StringProperty(name="File Path", default="", subtype="FILE_PATH", options={"SKIP_SAVE"},
                             description="Where to write it (empty: the path the job was submitted with)")

    @classmethod
    def poll(cls, context):
        return context.scene is not None and context.scene.farm_submit.job_id > 0

    def execute(self, context):
        settings = context.scene.farm_submit
        output = bpy.path.abspath(self.filepath) if self.filepath else settings.job_output
        try:
            farm = _farm_binary(settings)
            _fetch_job(farm, settings.job_id, os.path.abspath(output), settings.job_server, settings.timeout)
        except FarmError as e:
            self.report({"ERROR"}, "Farm: %s" % e)
            return {"CANCELLED"}
        self.report({"INFO"}, "Farm: wrote %s" % output)
        if not bpy.app.background and os.path.isfile(output):
            image = bpy.data.images.load(output, check_existing=True)
            image.reload()
        return {"FINISHED"}


# ---------------------------------------------------------------------------------------------
# The panel and the status bar


def _job_line(settings):
    text = "Job %d: %s %d%%" % (settings.job_id, settings.job_state or "?", round(100 * settings.job_progress))
    if settings.job_state == "running":
        text += ", %d worker%s" % (settings.job_workers, "" if settings.job_workers == 1 else "s")
    return text


class RENDER_PT_farm_submit(bpy.types.Panel):
    bl_label = "Render Farm"
    bl_space_type = "PROPERTIES"
    bl_region_type = "WINDOW"
    bl_context = "render"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        settings = context.scene.farm_submit
        col = layout.column()
        col.prop(settings, "farm_path")
        col.prop(settings, "server")
        col.prop(settings, "priority")
        col.prop(settings, "use_current_frame")
        sub = col.column()
        sub.active = not settings.use_current_frame
        sub.prop(settings, "frame")
        col.prop(settings, "output")
        col.prop(settings, "job_name")
        col.prop(settings, "save_first")
        col.prop(settings, "timeout")
        if bpy.data.is_dirty and not settings.save_first:
            layout.label(text="Unsaved changes: save before submitting", icon="ERROR")
        row = layout.row(align=True)
        row.operator(RENDER_OT_farm_submit.bl_idname, icon="RENDER_STILL")
        row.operator(RENDER_OT_farm_fetch.bl_idname, icon="IMAGE_DATA")
        if settings.job_id:
            box = layout.box()
            box.label(text=_job_line(settings), icon="INFO")
            box.prop(settings, "job_progress", text="", slider=True)
            if settings.job_reason:
                box.label(text=settings.job_reason, icon="ERROR")
            if settings.job_error:
                box.label(text=settings.job_error, icon="ERROR")


def _status_bar(self, context):
    scene = context.scene
    if scene is None or not hasattr(scene, "farm_submit"):
        return
    settings = scene.farm_submit
    if settings.job_id and (scene.name in _watches or settings.job_state in _TERMINAL):
        self.layout.label(text="Farm " + _job_line(settings), icon="RENDER_RESULT")


_classes = (FarmSubmitSettings, RENDER_OT_farm_submit, RENDER_OT_farm_fetch, RENDER_PT_farm_submit)


def register():
    for cls in _classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.farm_submit = PointerProperty(type=FarmSubmitSettings)
    bpy.types.STATUSBAR_HT_header.append(_status_bar)


def unregister():
    for watch in _watches.values():
        watch.stop.set()
    _watches.clear()
    if bpy.app.timers.is_registered(_timer):
        bpy.app.timers.unregister(_timer)
    bpy.types.STATUSBAR_HT_header.remove(_status_bar)
    del bpy.types.Scene.farm_submit
    for cls in reversed(_classes):
        bpy.utils.unregister_class(cls)


if __name__ == "__main__":
    register()
