//! Which classes have their `assert` statements enabled: `java`'s `-ea`/`-da`/`-esa`/`-dsa`
//! options, answered as HotSpot answers `Class.desiredAssertionStatus0` and hands the directives
//! to `ClassLoader` (`retrieveDirectives`).

/// The assertion options of a run, in the order given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AssertionStatus {
    /// `-ea`/`-da` without a name: classes of every class loader but the boot loader's.
    pub user_default: bool,
    /// `-esa`/`-dsa`: the boot loader's classes.
    pub system_default: bool,
    /// `-ea:com.acme.Foo`: one class (binary name with dots), in order given.
    pub classes: Vec<(String, bool)>,
    /// `-ea:com.acme...`: a package and its subpackages (`""`: the unnamed package, `-ea:...`).
    pub packages: Vec<(String, bool)>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not an assertion option (-ea[:NAME], -da[:NAME], -esa, -dsa)")]
pub struct NotAnAssertionOption(pub String);

impl AssertionStatus {
    /// The status `options` give, applied in order; what is not an assertion option is passed
    /// over (callers choose the options with [`AssertionStatus::is_option`] or check them first).
    pub fn of<'a>(options: impl IntoIterator<Item = &'a String>) -> AssertionStatus {
        let mut status = AssertionStatus::default();
        for option in options {
            let _ = status.add(option);
        }
        status
    }

    /// Whether `option` is one of `java`'s assertion options (`-ea`, `-enableassertions:…`, `-dsa` …).
    pub fn is_option(option: &str) -> bool {
        Self::default().add(option).is_ok()
    }

    /// Applies one option as `java` does; later options win over earlier ones for the same name.
    pub fn add(&mut self, option: &str) -> Result<(), NotAnAssertionOption> {
        let (flag, name) = match option.split_once(':') {
            Some((f, n)) => (f, Some(n)),
            None => (option, None),
        };
        let enable = match flag {
            "-ea" | "-enableassertions" => true,
            "-da" | "-disableassertions" => false,
            "-esa" | "-enablesystemassertions" if name.is_none() => {
                self.system_default = true;
                return Ok(());
            }
            "-dsa" | "-disablesystemassertions" if name.is_none() => {
                self.system_default = false;
                return Ok(());
            }
            _ => return Err(NotAnAssertionOption(option.to_string())),
        };
        match name {
            None | Some("") => self.user_default = enable,
            Some(n) => match n.strip_suffix("...") {
                Some(package) => self.packages.push((package.to_string(), enable)),
                None => self.classes.push((n.to_string(), enable)),
            },
        }
        Ok(())
    }

    /// Whether `class` (a binary name, dots or slashes) has assertions enabled; `system`: the boot
    /// loader defined it. A class option wins, then the most specific package option (the
    /// unnamed package's only for classes in it), then the default.
    pub fn enabled(&self, class: &str, system: bool) -> bool {
        let class = class.replace('/', ".");
        let last = |list: &[(String, bool)], name: &str| list.iter().rev().find(|(n, _)| n == name).map(|(_, e)| *e);
        if let Some(e) = last(&self.classes, &class) {
            return e;
        }
        let mut package = class.rsplit_once('.').map_or("", |(p, _)| p);
        loop {
            if let Some(e) = last(&self.packages, package) {
                return e;
            }
            match package.rsplit_once('.') {
                Some((outer, _)) => package = outer,
                None => break,
            }
        }
        if system {
            self.system_default
        } else {
            self.user_default
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(options: &[&str]) -> AssertionStatus {
        let mut s = AssertionStatus::default();
        for o in options {
            s.add(o).unwrap();
        }
        s
    }

    #[test]
    fn the_defaults_split_user_and_system_classes() {
        let s = status(&["-ea"]);
        assert!(s.enabled("com/acme/Foo", false));
        assert!(!s.enabled("java/util/HashMap", true));
        let s = status(&["-esa", "-ea", "-da"]);
        assert!(!s.enabled("com.acme.Foo", false));
        assert!(s.enabled("java.util.HashMap", true));
    }

    #[test]
    fn a_class_beats_its_package_and_the_most_specific_package_wins() {
        let s = status(&["-ea:com.acme...", "-da:com.acme.internal...", "-ea:com.acme.internal.Keep"]);
        assert!(s.enabled("com.acme.Foo", false));
        assert!(s.enabled("com.acme.deep.Bar", false));
        assert!(!s.enabled("com.acme.internal.Baz", false));
        assert!(s.enabled("com.acme.internal.Keep", false));
        assert!(!s.enabled("org.other.Foo", false));
        assert!(!s.enabled("com.acmeish.Foo", false), "a package is matched whole");
    }

    #[test]
    fn the_unnamed_package_option_covers_only_its_own_classes() {
        let s = status(&["-ea:..."]);
        assert!(s.enabled("Main", false));
        assert!(!s.enabled("com.acme.Foo", false));
    }

    #[test]
    fn a_later_option_for_the_same_name_wins() {
        let s = status(&["-ea:com.acme...", "-da:com.acme..."]);
        assert!(!s.enabled("com.acme.Foo", false));
        let s = status(&["-disableassertions:Main", "-enableassertions:Main"]);
        assert!(s.enabled("Main", false));
    }

    #[test]
    fn other_options_are_not_assertion_options() {
        assert!(AssertionStatus::is_option("-ea:com.acme..."));
        assert!(AssertionStatus::is_option("-dsa"));
        assert!(!AssertionStatus::is_option("-esa:com.acme"));
        assert!(!AssertionStatus::is_option("-eax"));
        assert!(!AssertionStatus::is_option("-Xmx1g"));
    }
}
