//! Naming run-time objects: every object carries the *producer* that made it — its allocation
//! site plus a context slot (1-object sensitivity: the allocation site of the allocating method's
//! receiver, mod `c`). Producers are the nodes both copy profiling and reference propagation start
//! from. Also here: turning sites into source locations once the run is over.

use crate::report::Location;
use crate::vm::class::{Class, ClassId, Method};
use crate::vm::heap::Ref;
use crate::vm::tracker::{Alloc, Site};
use rustc_hash::FxHashMap;

/// An allocation site in one context.
#[derive(Debug, Clone)]
pub struct Producer {
    pub site: Site,
    /// Context slot: 0 for allocations in static methods or with contexts off, else
    /// `1 + (owner's site id mod c)`.
    pub ctx: u32,
    /// The owner's allocation site (the first one seen in this slot), for naming the context.
    pub owner_site: Option<Site>,
    /// The first user frame that led to the allocation (the site itself in user code).
    pub user: Option<Site>,
    pub class: ClassId,
    pub instances: u64,
    pub bytes: u64,
}

pub struct ObjectTags {
    context_slots: u32,
    /// Split producers by the user frame that reached the site (for sites inside the JDK).
    by_user_frame: bool,
    site_ids: FxHashMap<Site, u32>,
    index: FxHashMap<(Site, u32, Option<Site>), u32>,
    pub producers: Vec<Producer>,
    /// Producer of each live object by handle, plus one (0: allocated by the VM, not tracked).
    of_object: Vec<u32>,
}

impl ObjectTags {
    pub fn new(context_slots: u32, by_user_frame: bool) -> Self {
        ObjectTags {
            context_slots,
            by_user_frame,
            site_ids: FxHashMap::default(),
            index: FxHashMap::default(),
            producers: Vec::new(),
            of_object: Vec::new(),
        }
    }

    /// Tags a new object; `user_frame` is the innermost user frame of its thread then
    /// (`Context::user_frame`: the allocation's own site when it is the user's code). Returns its producer.
    #[inline]
    pub fn on_alloc(&mut self, a: &Alloc, user_frame: Option<Site>) -> u32 {
        let (site, obj, class, bytes) = (a.site, a.obj, a.class, a.bytes);
        let (ctx, owner_site) = match (self.context_slots, self.producer_of(a.owner)) {
            (0, _) | (_, None) => (0, None),
            (c, Some(p)) => {
                let owner_site = self.producers[p as usize].site;
                let next = self.site_ids.len() as u32;
                let id = *self.site_ids.entry(owner_site).or_insert(next);
                (1 + id % c, Some(owner_site))
            }
        };
        let in_user_code = user_frame == Some(site);
        let user = if self.by_user_frame && !in_user_code { user_frame } else { None };
        let next = self.producers.len() as u32;
        let p = *self.index.entry((site, ctx, user)).or_insert(next);
        if p == next {
            let user = user.or(user_frame);
            self.producers.push(Producer { site, ctx, owner_site, user, class, instances: 0, bytes: 0 });
        }
        let prod = &mut self.producers[p as usize];
        prod.instances += 1;
        prod.bytes += bytes as u64;
        let i = obj as usize;
        if i >= self.of_object.len() {
            self.of_object.resize(i + 1, 0);
        }
        self.of_object[i] = p + 1;
        p
    }

    #[inline]
    pub fn producer_of(&self, obj: Ref) -> Option<u32> {
        match self.of_object.get(obj as usize) {
            Some(&p) if p != 0 => Some(p - 1),
            _ => None,
        }
    }

    /// The handle was freed (and may be reused for an object the VM allocates untracked).
    pub fn on_free(&mut self, obj: Ref) {
        if let Some(p) = self.of_object.get_mut(obj as usize) {
            *p = 0;
        }
    }
}

/// Sites to source locations, resolved while the VM's tables are still there.
#[derive(Default)]
pub struct Locator {
    resolved: FxHashMap<Site, Location>,
}

impl Locator {
    pub fn resolve(&mut self, methods: &[Method], classes: &[Class], site: Site) {
        self.resolved.entry(site).or_insert_with(|| locate(methods, classes, site));
    }

    pub fn get(&self, site: Site) -> Location {
        self.resolved.get(&site).cloned().unwrap_or_else(|| Location {
            file: None,
            line: None,
            class: "?".into(),
            method: "?".into(),
            descriptor: String::new(),
            bci: 0,
            expression: None,
        })
    }
}

/// The source location of a site: the class's source file under its package directory, the line
/// of the op's bytecode index.
pub fn locate(methods: &[Method], classes: &[Class], site: Site) -> Location {
    let method = &methods[site.method as usize];
    let class = &classes[method.class as usize];
    let bci = method.code.get().and_then(|c| c.bci.get(site.pc as usize).copied()).unwrap_or(0);
    let file = class.file.as_ref().and_then(|f| f.source_file.as_ref()).map(|name| match class.name.rfind('/') {
        Some(slash) => format!("{}/{name}", &class.name[..slash]),
        None => name.to_string(),
    });
    // An allocation is on the line of its `new` expression, which the line table may not give.
    let line = match (method.raw.as_ref(), class.file.as_ref()) {
        (Some(code), Some(cf)) if code.bytecode.get(bci as usize) == Some(&0xbb) => {
            let source = class.source.as_deref().and_then(source_text);
            super::allocation_line::allocation_line(code, &cf.constant_pool, bci, source.as_deref())
        }
        _ => method.line_of(bci),
    };
    Location {
        file,
        line: line.map(u32::from),
        class: class.java_name(),
        method: method.name.to_string(),
        descriptor: method.descriptor.to_string(),
        bci: bci as u32,
        expression: super::words::expression_at(method, class, bci as u32),
    }
}

/// A source file's text, read once per version of the file (a long-lived server profiles again
/// after edits).
fn source_text(path: &std::path::Path) -> Option<std::rc::Rc<str>> {
    type Cache = FxHashMap<std::path::PathBuf, (Option<std::time::SystemTime>, u64, std::rc::Rc<str>)>;
    thread_local! {
        static SOURCES: std::cell::RefCell<Cache> = Default::default();
    }
    let meta = std::fs::metadata(path).ok()?;
    let version = (meta.modified().ok(), meta.len());
    SOURCES.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((modified, len, text)) = cache.get(path) {
            if (*modified, *len) == version {
                return Some(text.clone());
            }
        }
        let text: std::rc::Rc<str> = std::fs::read_to_string(path).ok()?.into();
        cache.insert(path.to_path_buf(), (version.0, version.1, text.clone()));
        Some(text)
    })
}

/// The Java name of a class: `java.lang.String`, `int[]`, `java.util.HashMap$Node[]`.
pub fn type_name(classes: &[Class], class: ClassId) -> String {
    let name = &*classes[class as usize].name;
    let dims = name.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return name.replace('/', ".");
    }
    let elem = &name[dims..];
    let base = match elem.as_bytes()[0] {
        b'L' => elem[1..elem.len() - 1].replace('/', "."),
        c => crate::classfile::descriptor::primitive_name(c as char).unwrap_or("?").to_string(),
    };
    format!("{base}{}", "[]".repeat(dims))
}
