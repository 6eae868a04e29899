// Stand-in: the part of Apple's Foundation that Linux's Foundation lacks or declares unavailable and Tether uses —
// the URL loading system, with the authentication challenge and its credentials — in signature only, for
// scripts/apple-typecheck.sh (module StandInFoundation). On Apple platforms these come with `import Foundation`;
// the type-check imports this module beside Foundation in each file that imports Foundation, and Linux's
// FoundationNetworking is not imported (canImport(FoundationNetworking) is false on Apple platforms). This module
// imports Linux's Foundation, so its declarations take the place of the unavailable ones Linux's Foundation keeps
// under the same names ("This type has moved to the FoundationNetworking module"). Declarations only: nothing here
// runs.
//
// Apple declares the delegate protocols' methods `@optional`, which Swift cannot declare without Objective-C: here
// the protocols have no requirements, and each optional method Tether implements is a protocol of its own
// (`URLSessionDelegateMethods`, below) that scripts/apple-stand-ins/Checks/DelegateMethods.swift makes Tether's
// delegate conform to, so that a method whose name or type drifts from Apple's (which URLSession would then never
// call) fails the type-check.
//
// Sendable as Apple declares it: NS_SWIFT_SENDABLE classes are Sendable; NSURLSession.h and NSURLProtectionSpace.h
// are audited for sendability (NS_HEADER_AUDIT_BEGIN(nullability, sendability)), so their other types are not.
// Where the header could not be read in the iOS 18 SDK (URLCredential, URLAuthenticationChallenge, URLResponse,
// URLRequest) the stricter form is declared: not Sendable.
//
// Checked against, in xybp888/iOS-SDKs iPhoneOS18.0.sdk/System/Library/Frameworks/Foundation.framework/:
//   Headers/NSURLSession.h: NSURLSession, NSURLSessionConfiguration (connectionProxyDictionary), NSURLSessionTask,
//     NSURLSessionWebSocketTask and NSURLSessionWebSocketCloseCode, NSURLSessionAuthChallengeDisposition, the
//     delegate protocols and their NS_SWIFT_SENDABLE completion handlers, NSURLSessionTaskMetrics and
//     NSURLSessionTaskTransactionMetrics (the dates and remoteAddress)
//   Headers/NSURLProtectionSpace.h: NSURLProtectionSpace (serverTrust, distinguishedNames), the authentication methods
//   Headers/NSURLRequest.h: NSURLRequestCachePolicy
// and, for what that copy does not hold: NSURLCredential.h as Apple's header declares it (Copyright 2003-2019:
// initWithIdentity:certificates:persistence:, initWithTrust:, NSURLCredentialPersistence); Apple's Swift
// declarations at developer.apple.com/documentation/foundation for the Foundation overlay
// (URLSessionWebSocketTask.Message, `send(_:) async throws`, `@preconcurrency receive(completionHandler:)`,
// URLRequest) and for URLAuthenticationChallenge, URLResponse and HTTPURLResponse. Tether's own tests (the macOS
// configuration type-checks them too) use a few declarations the library does not: URLCredential's user and password,
// URLAuthenticationChallenge's initializer and its sender protocol, HTTPURLResponse's initializer, URLRequest's
// allHTTPHeaderFields.
import Foundation
@_exported import Security
@_exported import StandInCoreFoundation

// MARK: NSURLSession.h

/// `NS_SWIFT_SENDABLE API_AVAILABLE(macos(10.9), ios(7.0), watchos(2.0), tvos(9.0))`
/// `@interface NSURLSession : NSObject`
open class URLSession: NSObject, @unchecked Sendable {
    /// `+ sessionWithConfiguration:delegate:delegateQueue:`
    public init(
        configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?,
        delegateQueue queue: OperationQueue?
    ) { standIn() }
    /// `+ sessionWithConfiguration:`
    public init(configuration: URLSessionConfiguration) { standIn() }
    /// `@property (readonly, copy) NSURLSessionConfiguration *configuration;`
    open var configuration: URLSessionConfiguration { standIn() }
    /// `- (void)finishTasksAndInvalidate;`
    open func finishTasksAndInvalidate() { standIn() }
    /// `- (void)invalidateAndCancel;`
    open func invalidateAndCancel() { standIn() }
    /// `- (NSURLSessionWebSocketTask *)webSocketTaskWithURL:(NSURL *)url` (iOS 13)
    open func webSocketTask(with url: URL) -> URLSessionWebSocketTask { standIn() }
    /// `- (NSURLSessionWebSocketTask *)webSocketTaskWithRequest:(NSURLRequest *)request` (iOS 13)
    open func webSocketTask(with request: URLRequest) -> URLSessionWebSocketTask { standIn() }
}

extension URLSession {
    /// `typedef NS_ENUM(NSInteger, NSURLSessionAuthChallengeDisposition)`
    public enum AuthChallengeDisposition: Int, @unchecked Sendable {
        case useCredential = 0
        case performDefaultHandling = 1
        case cancelAuthenticationChallenge = 2
        case rejectProtectionSpace = 3
    }
}

/// `NS_SWIFT_SENDABLE @interface NSURLSessionConfiguration : NSObject <NSCopying>`
open class URLSessionConfiguration: NSObject, NSCopying, @unchecked Sendable {
    /// `@property (class, readonly, strong) NSURLSessionConfiguration *defaultSessionConfiguration;`
    open class var `default`: URLSessionConfiguration { standIn() }
    /// `@property (class, readonly, strong) NSURLSessionConfiguration *ephemeralSessionConfiguration;`
    open class var ephemeral: URLSessionConfiguration { standIn() }
    /// `@property (nullable, copy) NSDictionary *connectionProxyDictionary;`
    open var connectionProxyDictionary: [AnyHashable: Any]? {
        get { standIn() }
        set { standIn() }
    }
    /// `@property NSTimeInterval timeoutIntervalForRequest;`
    open var timeoutIntervalForRequest: TimeInterval {
        get { standIn() }
        set { standIn() }
    }
    /// NSCopying
    open func copy(with zone: NSZone? = nil) -> Any { standIn() }
}

/// `NS_SWIFT_SENDABLE @interface NSURLSessionTask : NSObject <NSCopying, NSProgressReporting>`
open class URLSessionTask: NSObject, @unchecked Sendable {
    /// `@property (nullable, readonly, copy) NSURLResponse *response;`
    open var response: URLResponse? { standIn() }
    /// `- (void)cancel;`
    open func cancel() { standIn() }
    /// `- (void)resume;`
    open func resume() { standIn() }
    /// `- (void)suspend;`
    open func suspend() { standIn() }
}

/// `NS_SWIFT_SENDABLE API_AVAILABLE(macosx(10.12), ios(10.0), watchos(3.0), tvos(10.0))`
/// `@interface NSURLSessionTaskTransactionMetrics : NSObject`: the properties Tether reads.
open class URLSessionTaskTransactionMetrics: NSObject, @unchecked Sendable {
    /// `@property (nullable, copy, readonly) NSDate *fetchStartDate;`
    open var fetchStartDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *domainLookupStartDate;`
    open var domainLookupStartDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *domainLookupEndDate;`
    open var domainLookupEndDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *connectStartDate;`
    open var connectStartDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *secureConnectionStartDate;`
    open var secureConnectionStartDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *secureConnectionEndDate;`
    open var secureConnectionEndDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *connectEndDate;`
    open var connectEndDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *requestStartDate;`
    open var requestStartDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSDate *responseStartDate;`
    open var responseStartDate: Date? { standIn() }
    /// `@property (nullable, copy, readonly) NSString *remoteAddress API_AVAILABLE(macos(10.15), ios(13.0), ...);`
    open var remoteAddress: String? { standIn() }
}

/// `NS_SWIFT_SENDABLE API_AVAILABLE(macosx(10.12), ios(10.0), watchos(3.0), tvos(10.0))`
/// `@interface NSURLSessionTaskMetrics : NSObject`
open class URLSessionTaskMetrics: NSObject, @unchecked Sendable {
    /// `@property (copy, readonly) NSArray<NSURLSessionTaskTransactionMetrics *> *transactionMetrics;`
    open var transactionMetrics: [URLSessionTaskTransactionMetrics] { standIn() }
    /// `@property (copy, readonly) NSDateInterval *taskInterval;` (bridged to `DateInterval`)
    open var taskInterval: DateInterval { standIn() }
}

/// `NS_SWIFT_SENDABLE @interface NSURLSessionWebSocketTask : NSURLSessionTask` (iOS 13)
open class URLSessionWebSocketTask: URLSessionTask, @unchecked Sendable {
    /// `typedef NS_ENUM(NSInteger, NSURLSessionWebSocketCloseCode)`
    public enum CloseCode: Int, @unchecked Sendable {
        case invalid = 0
        case normalClosure = 1000
        case goingAway = 1001
        case protocolError = 1002
        case unsupportedData = 1003
        case noStatusReceived = 1005
        case abnormalClosure = 1006
        case invalidFramePayloadData = 1007
        case policyViolation = 1008
        case messageTooBig = 1009
        case mandatoryExtensionMissing = 1010
        case internalServerError = 1011
        case tlsHandshakeFailure = 1015
    }

    /// `- (void)sendPingWithPongReceiveHandler:(void (NS_SWIFT_SENDABLE ^)(NSError * _Nullable error))`
    /// `pongReceiveHandler;`
    open func sendPing(pongReceiveHandler: @escaping @Sendable ((any Error)?) -> Void) { standIn() }
    /// `- (void)cancelWithCloseCode:(NSURLSessionWebSocketCloseCode)closeCode reason:(nullable NSData *)reason;`
    open func cancel(with closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) { standIn() }
    /// `@property NSInteger maximumMessageSize;`
    open var maximumMessageSize: Int {
        get { standIn() }
        set { standIn() }
    }
    /// `@property (readonly) NSURLSessionWebSocketCloseCode closeCode;`
    open var closeCode: URLSessionWebSocketTask.CloseCode { standIn() }
    /// `@property (nullable, readonly, copy) NSData *closeReason;`
    open var closeReason: Data? { standIn() }
}

// The Foundation overlay's Swift API of the task
// (developer.apple.com/documentation/foundation/urlsessionwebsockettask).
extension URLSessionWebSocketTask {
    /// `enum Message` (not Sendable; not frozen)
    public enum Message {
        case data(Data)
        case string(String)
    }

    /// `@preconcurrency func send(_ message: URLSessionWebSocketTask.Message,
    /// completionHandler: @escaping @Sendable ((any Error)?) -> Void)`
    @preconcurrency
    public func send(_ message: Message, completionHandler: @escaping @Sendable ((any Error)?) -> Void) { standIn() }
    /// `func send(_ message: URLSessionWebSocketTask.Message) async throws`
    public func send(_ message: Message) async throws { standIn() }
    /// `@preconcurrency func receive(completionHandler: @escaping @Sendable (Result<URLSessionWebSocketTask.Message,
    /// any Error>) -> Void)`
    @preconcurrency
    public func receive(completionHandler: @escaping @Sendable (Result<Message, any Error>) -> Void) { standIn() }
    /// `func receive() async throws -> URLSessionWebSocketTask.Message`
    public func receive() async throws -> Message { standIn() }
}

/// `NS_SWIFT_SENDABLE @protocol NSURLSessionDelegate <NSObject>`: every method `@optional` (see
/// `URLSessionDelegateMethods`).
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {}
/// `@protocol NSURLSessionTaskDelegate <NSURLSessionDelegate>`
public protocol URLSessionTaskDelegate: URLSessionDelegate {}
/// `@protocol NSURLSessionWebSocketDelegate <NSURLSessionTaskDelegate>` (iOS 13)
public protocol URLSessionWebSocketDelegate: URLSessionTaskDelegate {}

/// The `@optional` delegate methods URLSession sends by selector, one protocol each (see the top of this file).
public enum URLSessionDelegateMethods {
    /// `- URLSession:didReceiveChallenge:completionHandler:` of NSURLSessionDelegate. When a delegate implements it,
    /// URLSession hands it every session-level challenge (server trust, client certificate, NTLM, Negotiate).
    public protocol DidReceiveChallenge: URLSessionDelegate {
        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)
    }

    /// `- URLSession:task:didReceiveChallenge:completionHandler:` of NSURLSessionTaskDelegate: the task-level
    /// challenges, and the session-level ones when the session-level method is not implemented.
    public protocol TaskDidReceiveChallenge: URLSessionTaskDelegate {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)
    }

    /// `- URLSession:task:willPerformHTTPRedirection:newRequest:completionHandler:` of NSURLSessionTaskDelegate
    /// (`completionHandler:(void (NS_SWIFT_SENDABLE ^)(NSURLRequest * _Nullable))`): a WebSocket task asks it before
    /// its handshake completes; nil refuses the redirect.
    public protocol TaskWillPerformHTTPRedirection: URLSessionTaskDelegate {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)
    }

    /// `- URLSession:task:didCompleteWithError:` of NSURLSessionTaskDelegate.
    public protocol TaskDidComplete: URLSessionTaskDelegate {
        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
    }

    /// `- URLSession:task:didFinishCollectingMetrics:` of NSURLSessionTaskDelegate (iOS 10).
    public protocol TaskDidFinishCollecting: URLSessionTaskDelegate {
        func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics)
    }

    /// `- URLSession:webSocketTask:didOpenWithProtocol:` of NSURLSessionWebSocketDelegate.
    public protocol WebSocketDidOpen: URLSessionWebSocketDelegate {
        func urlSession(
            _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?)
    }

    /// `- URLSession:webSocketTask:didCloseWithCode:reason:` of NSURLSessionWebSocketDelegate.
    public protocol WebSocketDidClose: URLSessionWebSocketDelegate {
        func urlSession(
            _ session: URLSession, webSocketTask: URLSessionWebSocketTask,
            didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
    }
}

// MARK: NSURLProtectionSpace.h

/// `FOUNDATION_EXPORT NSString * const NSURLAuthenticationMethodClientCertificate` (iOS 3)
public let NSURLAuthenticationMethodClientCertificate: String = "NSURLAuthenticationMethodClientCertificate"
/// `FOUNDATION_EXPORT NSString * const NSURLAuthenticationMethodServerTrust` (iOS 3)
public let NSURLAuthenticationMethodServerTrust: String = "NSURLAuthenticationMethodServerTrust"
/// `FOUNDATION_EXPORT NSString * const NSURLAuthenticationMethodHTTPBasic`
public let NSURLAuthenticationMethodHTTPBasic: String = "NSURLAuthenticationMethodHTTPBasic"

/// `NS_SWIFT_SENDABLE @interface NSURLProtectionSpace : NSObject <NSSecureCoding, NSCopying>`
open class URLProtectionSpace: NSObject, @unchecked Sendable {
    /// `- initWithHost:port:protocol:realm:authenticationMethod:`
    public init(host: String, port: Int, protocol: String?, realm: String?, authenticationMethod: String?) {
        standIn()
    }
    /// `@property (readonly, copy) NSString *host;`
    open var host: String { standIn() }
    /// `@property (readonly) NSInteger port;`
    open var port: Int { standIn() }
    /// `@property (readonly, copy) NSString *authenticationMethod;`
    open var authenticationMethod: String { standIn() }
    /// `@property (nullable, readonly, copy) NSArray<NSData *> *distinguishedNames;` (NSClientCertificateSpace)
    open var distinguishedNames: [Data]? { standIn() }
    /// `@property (nullable, readonly) SecTrustRef serverTrust;` (NSServerTrustValidationSpace)
    open var serverTrust: SecTrust? { standIn() }
}

// MARK: NSURLAuthenticationChallenge.h, NSURLCredential.h

/// `@protocol NSURLAuthenticationChallengeSender <NSObject>` (its last two methods `@optional`)
public protocol URLAuthenticationChallengeSender: NSObjectProtocol {
    /// `- (void)useCredential:(NSURLCredential *)credential`
    /// `forAuthenticationChallenge:(NSURLAuthenticationChallenge *)challenge;`
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge)
    /// `- (void)continueWithoutCredentialForAuthenticationChallenge:(NSURLAuthenticationChallenge *)challenge;`
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge)
    /// `- (void)cancelAuthenticationChallenge:(NSURLAuthenticationChallenge *)challenge;`
    func cancel(_ challenge: URLAuthenticationChallenge)
}

/// `@interface NSURLAuthenticationChallenge : NSObject <NSSecureCoding>`
open class URLAuthenticationChallenge: NSObject {
    /// `- initWithProtectionSpace:proposedCredential:previousFailureCount:failureResponse:error:sender:`
    public init(
        protectionSpace space: URLProtectionSpace, proposedCredential credential: URLCredential?,
        previousFailureCount: Int, failureResponse response: URLResponse?, error: (any Error)?,
        sender: any URLAuthenticationChallengeSender
    ) { standIn() }
    /// `@property (readonly, copy) NSURLProtectionSpace *protectionSpace;`
    open var protectionSpace: URLProtectionSpace { standIn() }
    /// `@property (nullable, readonly, copy) NSURLCredential *proposedCredential;`
    open var proposedCredential: URLCredential? { standIn() }
    /// `@property (readonly) NSInteger previousFailureCount;`
    open var previousFailureCount: Int { standIn() }
}

/// `@interface NSURLCredential : NSObject <NSSecureCoding, NSCopying>`
open class URLCredential: NSObject {
    /// `typedef NS_ENUM(NSUInteger, NSURLCredentialPersistence)`
    public enum Persistence: UInt, @unchecked Sendable {
        case none = 0
        case forSession = 1
        case permanent = 2
        case synchronizable = 3
    }

    /// `- (instancetype)initWithUser:(NSString *)user password:(NSString *)password
    /// persistence:(NSURLCredentialPersistence)persistence;`
    public init(user: String, password: String, persistence: URLCredential.Persistence) { standIn() }
    /// `- (instancetype)initWithIdentity:(SecIdentityRef)identity certificates:(nullable NSArray *)certArray
    /// persistence:(NSURLCredentialPersistence)persistence` (iOS 3)
    public init(identity: SecIdentity, certificates certArray: [Any]?, persistence: URLCredential.Persistence) {
        standIn()
    }
    /// `- (instancetype)initWithTrust:(SecTrustRef)trust` (iOS 3)
    public init(trust: SecTrust) { standIn() }
    /// `@property (readonly) NSURLCredentialPersistence persistence;`
    open var persistence: URLCredential.Persistence { standIn() }
    /// `@property (nullable, readonly, copy) NSString *user;`
    open var user: String? { standIn() }
    /// `@property (nullable, readonly, copy) NSString *password;`
    open var password: String? { standIn() }
    /// `@property (nullable, readonly) SecIdentityRef identity;`
    open var identity: SecIdentity? { standIn() }
}

// MARK: NSURLRequest.h, NSURLResponse.h, and the overlay's URLRequest

/// `@interface NSURLRequest : NSObject <NSSecureCoding, NSCopying, NSMutableCopying>`
open class NSURLRequest: NSObject {
    /// `typedef NS_ENUM(NSUInteger, NSURLRequestCachePolicy)`
    public enum CachePolicy: UInt, @unchecked Sendable {
        case useProtocolCachePolicy = 0
        case reloadIgnoringLocalCacheData = 1
        case reloadIgnoringLocalAndRemoteCacheData = 4
        case returnCacheDataElseLoad = 2
        case returnCacheDataDontLoad = 3
        case reloadRevalidatingCacheData = 5
    }
}

/// `struct URLRequest` (the overlay's value type over NSURLRequest)
public struct URLRequest: Equatable, Hashable {
    public typealias CachePolicy = NSURLRequest.CachePolicy

    /// `init(url: URL, cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy,`
    /// `timeoutInterval: TimeInterval = 60.0)`
    public init(url: URL, cachePolicy: CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval = 60.0) {
        standIn()
    }
    /// `var url: URL?`
    public var url: URL? {
        get { standIn() }
        set { standIn() }
    }
    /// `var timeoutInterval: TimeInterval`
    public var timeoutInterval: TimeInterval {
        get { standIn() }
        set { standIn() }
    }
    /// `var allHTTPHeaderFields: [String : String]?`
    public var allHTTPHeaderFields: [String: String]? {
        get { standIn() }
        set { standIn() }
    }
    /// `func value(forHTTPHeaderField field: String) -> String?`
    public func value(forHTTPHeaderField field: String) -> String? { standIn() }
    /// `mutating func setValue(_ value: String?, forHTTPHeaderField field: String)`
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) { standIn() }
    /// `mutating func addValue(_ value: String, forHTTPHeaderField field: String)`
    public mutating func addValue(_ value: String, forHTTPHeaderField field: String) { standIn() }

    public static func == (lhs: URLRequest, rhs: URLRequest) -> Bool { standIn() }
    public func hash(into hasher: inout Hasher) { standIn() }
}

/// `@interface NSURLResponse : NSObject <NSSecureCoding, NSCopying>`
open class URLResponse: NSObject {
    /// `@property (nullable, readonly, copy) NSURL *URL;`
    open var url: URL? { standIn() }
}

/// `@interface NSHTTPURLResponse : NSURLResponse`
open class HTTPURLResponse: URLResponse {
    /// `- (nullable instancetype)initWithURL:(NSURL *)url statusCode:(NSInteger)statusCode
    /// HTTPVersion:(nullable NSString *)HTTPVersion
    /// headerFields:(nullable NSDictionary<NSString *, NSString *> *)headerFields`
    public init?(url: URL, statusCode: Int, httpVersion HTTPVersion: String?, headerFields: [String: String]?) {
        standIn()
    }
    /// `@property (readonly) NSInteger statusCode;`
    open var statusCode: Int { standIn() }
    /// `- (nullable NSString *)valueForHTTPHeaderField:(NSString *)field` (iOS 13)
    open func value(forHTTPHeaderField field: String) -> String? { standIn() }
}

// URLError is not declared here: Linux's Foundation declares it (Foundation.URLError) as Apple's overlay does, with
// the codes of NSURLError.h, and a second declaration would be ambiguous beside it.

/// Every body of a stand-in: they are declarations for the type-check and never run.
func standIn() -> Never { fatalError("a stand-in of an Apple declaration, for type-checking only") }
