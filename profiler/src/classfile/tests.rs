use super::*;

/// A tiny but complete class file: `public class T { public static int f() { return 42; } }`.
fn tiny_class() -> Vec<u8> {
    let mut b = vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61];
    let utf8 = |b: &mut Vec<u8>, s: &str| {
        b.push(1);
        b.extend_from_slice(&(s.len() as u16).to_be_bytes());
        b.extend_from_slice(s.as_bytes());
    };
    b.extend_from_slice(&8u16.to_be_bytes()); // 7 entries
    utf8(&mut b, "T"); // 1
    b.extend_from_slice(&[7, 0, 1]); // 2: Class T
    utf8(&mut b, "f"); // 3
    utf8(&mut b, "()I"); // 4
    utf8(&mut b, "Code"); // 5
    utf8(&mut b, "java/lang/Object"); // 6
    b.extend_from_slice(&[7, 0, 6]); // 7: Class Object
    b.extend_from_slice(&[0, 0x21, 0, 2, 0, 7, 0, 0, 0, 0, 0, 1]);
    b.extend_from_slice(&[0, 9, 0, 3, 0, 4, 0, 1, 0, 5]);
    let code = [0u8, 1, 0, 0, 0, 0, 0, 3, 16, 42, 172, 0, 0, 0, 0];
    b.extend_from_slice(&(code.len() as u32).to_be_bytes());
    b.extend_from_slice(&code);
    b.extend_from_slice(&[0, 0]);
    b
}

#[test]
fn parses_a_minimal_class() {
    let c = parse(&tiny_class()).unwrap();
    assert_eq!(&*c.this_class, "T");
    assert_eq!(c.super_class.as_deref(), Some("java/lang/Object"));
    assert_eq!(c.methods.len(), 1);
    assert_eq!(c.methods[0].code.as_ref().unwrap().bytecode, vec![16, 42, 172]);
}

#[test]
fn every_truncation_is_an_error_with_an_offset_inside_the_input() {
    let bytes = tiny_class();
    for len in 0..bytes.len() {
        let err = parse(&bytes[..len]).expect_err("a truncated class must not parse");
        assert!(err.offset <= len, "offset {} beyond truncated length {len}", err.offset);
    }
}

#[test]
fn bad_magic_names_what_was_found() {
    let mut bytes = tiny_class();
    bytes[0] = 0;
    let err = parse(&bytes).unwrap_err();
    assert_eq!(err.offset, 0);
    assert!(err.expected.contains("0x00FEBABE"), "{}", err.expected);
}

#[test]
fn method_descriptors() {
    let d = descriptor::MethodDescriptor::parse("(IJ[Ljava/lang/String;D)V").unwrap();
    assert_eq!(d.param_slots(), 6);
    assert_eq!(d.param_types, vec!["I", "J", "[Ljava/lang/String;", "D"]);
    assert!(descriptor::MethodDescriptor::parse("(L;)V").is_none());
    assert!(descriptor::MethodDescriptor::parse("(I)VV").is_none());
}
